package commands

import (
	"context"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/netns"
	"github.com/agbench/agbench/internal/proc"
)

// A cluster whose nodes are hosts of their own, with links and a listener: create and
// status show each node's address and exporter; the standby streams through the primary's
// link on the root namespace's address; a read-only session through the listener lands on
// the standby at its own address; a stress run routes to it; destroy leaves nothing behind.
func TestClusterNetnsWithLinksListenerAndLoad(t *testing.T) {
	t.Parallel()
	clustertest.RequireNetns(t)
	home := clustertest.Home(t)
	checkNetnsNeedsRoot(t, home)
	env := map[string]string{"AGBENCH_HOME": home}
	base, err := clustertest.FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	lis := net.JoinHostPort("127.0.0.1", strconv.Itoa(base))
	code, out, errs := e2etest.Run(t, env, "cluster", "create", "--name", "nsl", "--netns", "--standbys", "1", "--set", "fsync=off",
		"--link-latency", "1ms", "--listener="+lis)
	if code != 0 {
		t.Fatalf("create: %d %s %s", code, out, errs)
	}
	t.Cleanup(func() { e2etest.Run(t, env, "cluster", "destroy", "--name", "nsl") })
	topo, err := cluster.Load(home, "nsl")
	if err != nil {
		t.Fatal(err)
	}
	p, s := topo.Primary(), topo.Standbys()[0]
	_, status, _ := e2etest.Run(t, env, "cluster", "status", "--name", "nsl")
	for _, want := range []string{"network: a network namespace per node on " + topo.Netns.Subnet,
		"primary: " + net.JoinHostPort(p.Host, strconv.Itoa(p.Port)) + " · namespace " + p.Netns.Namespace + " · exporter http://" + p.Host + ":9100/metrics · running (pid ",
		"standby1: " + net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) + " · namespace " + s.Netns.Namespace} {
		if !strings.Contains(out, want) || !strings.Contains(status, want) {
			t.Errorf("create's and status's output lack %q:\n%s\n%s", want, out, status)
		}
	}
	if p.LinkHost != topo.Netns.Gateway {
		t.Errorf("the primary's link listens at %q; want the root namespace's address %s", p.LinkHost, topo.Netns.Gateway)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var from string
	if err := connect(t, topo.ConnString(p, "")).QueryRow(ctx, `SELECT host(client_addr) FROM pg_stat_replication`).Scan(&from); err != nil || from != topo.Netns.Gateway {
		t.Errorf("the standby streams from %q (%v); want through the primary's link, from %s", from, err, topo.Netns.Gateway)
	}
	ro := net.JoinHostPort("127.0.0.1", strconv.Itoa(base+1))
	var at string
	lc := connect(t, "postgres://"+topo.Superuser+"@"+ro+"/postgres?sslmode=disable&passfile="+topo.PassFile)
	if err := lc.QueryRow(ctx, `SELECT host(inet_server_addr())`).Scan(&at); err != nil || at != s.Host {
		t.Errorf("a read-only session through the listener reached %q (%v); want the standby at %s", at, err, s.Host)
	}
	code, out, errs = e2etest.Run(t, env, "stress", "--cluster", "nsl", "--init", "500", "--query", "SELECT count(*) FROM customer WHERE c_id <= $1",
		"--param-range", "1:500", "--threads", "1", "--iterations", "20", "--compare", "routing=off,on", "--results", t.TempDir())
	if code != 0 || !strings.Contains(out, "landed  routing=on: standby1 (standby) 1") {
		t.Errorf("stress: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	destroyNetns(t, env, topo)
}

// checkNetnsNeedsRoot runs create --netns as the user postgres (a copy of the binary in
// home, which it can reach): exit 2 naming why root is needed, nothing made.
func checkNetnsNeedsRoot(t *testing.T, home string) {
	t.Helper()
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Logf("no user postgres to run create --netns as: %v", err)
		return
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	bin := filepath.Join(home, "agbench")
	b, err := os.ReadFile(e2etest.Bin(t))
	if err == nil {
		err = os.WriteFile(bin, b, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(bin)
	cmd := exec.Command(bin, "cluster", "create", "--name", "nsroot", "--netns")
	cmd.Env = append(os.Environ(), "AGBENCH_HOME="+filepath.Join(home, "nsroot"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), "--netns needs root") {
		t.Errorf("create --netns as postgres: %v\n%s; want exit 2 naming the need of root", err, out)
	}
	if _, err := os.Stat(filepath.Join(home, "nsroot")); err == nil {
		t.Errorf("create --netns as postgres made %s", filepath.Join(home, "nsroot"))
	}
}

// destroyNetns runs cluster destroy and checks that nothing of the cluster is left: no
// namespace or interface of its names, no process of its folder or its exporters.
func destroyNetns(t *testing.T, env map[string]string, topo *cluster.Topology) {
	t.Helper()
	if code, out, errs := e2etest.Run(t, env, "cluster", "destroy", "--name", topo.Name); code != 0 {
		t.Fatalf("destroy: %d %s %s", code, out, errs)
	}
	if left, err := netns.List(cluster.GroupPrefix(topo.Dir, topo.Name)); err != nil || len(left) > 0 {
		t.Errorf("after destroy: namespaces %v (%v)", left, err)
	}
	if topo.Netns != nil && topo.Netns.Bridge != "" {
		if left, err := netns.Links(strings.TrimPrefix(topo.Netns.Bridge, netns.LinkPrefix)); err != nil || len(left) > 0 {
			t.Errorf("after destroy: interfaces %v (%v)", left, err)
		}
	}
	if left := processesOf(topo); len(left) > 0 {
		t.Errorf("after destroy: processes %v still run", left)
	}
}

// processesOf lists the processes whose command line names the cluster's folder (its
// servers) or one of its nodes' exporters.
func processesOf(topo *cluster.Topology) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !cluster.Alive(pid) {
			continue
		}
		args, err := proc.Cmdline(proc.Root, pid)
		line := strings.Join(args, " ")
		if err != nil || !strings.Contains(line, topo.Dir+"/") && !strings.Contains(line, "prometheus-node-exporter --web.listen-address="+netnsSubnetStart(topo)) {
			continue
		}
		out = append(out, e.Name()+" "+line)
	}
	return out
}

// netnsSubnetStart is the first three octets of the cluster's subnet with the dot after
// them, which every node's address starts with ("" when none was chosen).
func netnsSubnetStart(topo *cluster.Topology) string {
	if topo.Netns == nil || topo.Netns.Subnet == "" {
		return "\x00"
	}
	return topo.Netns.Subnet[:strings.LastIndex(topo.Netns.Subnet, ".")+1]
}

// An agbench killed while it creates a cluster in namespaces (a primary and a standby
// running in theirs, a second standby being cloned) leaves a cluster that destroy removes
// whole, and a cluster of that name can be made again.
func TestClusterNetnsKilledMidCreate(t *testing.T) {
	t.Parallel()
	clustertest.RequireNetns(t)
	home := clustertest.Home(t)
	env := map[string]string{"AGBENCH_HOME": home}
	// Registered first, run last: a test that fails before its own destroy leaves nothing.
	t.Cleanup(func() { e2etest.Run(t, env, "cluster", "destroy", "--name", "nsk") })
	pr := e2etest.Start(t, env, "cluster", "create", "--name", "nsk", "--netns", "--standbys", "2", "--set", "fsync=off")
	deadline := time.Now().Add(3 * time.Minute)
	for !strings.Contains(pr.Stderr.String(), "pg_basebackup standby2") {
		if time.Now().After(deadline) {
			t.Fatalf("create did not reach standby2 within 3 minutes:\n%s", pr.Stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	pr.Kill(t)
	topo, err := cluster.Load(home, "nsk")
	if err != nil {
		t.Fatalf("the killed create left no topology that destroy can find: %v", err)
	}
	if left, _ := netns.List(cluster.GroupPrefix(topo.Dir, topo.Name)); len(left) < 2 {
		t.Fatalf("the killed create left namespaces %v; want the primary's and standby1's at least", left)
	}
	if len(processesOf(topo)) == 0 {
		t.Fatal("the killed create left no server running: the test kills too late or too early")
	}
	destroyNetns(t, env, topo)
	if code, out, errs := e2etest.Run(t, env, "cluster", "create", "--name", "nsk", "--netns", "--standbys", "0", "--set", "fsync=off"); code != 0 {
		t.Fatalf("create again: %d %s %s", code, out, errs)
	}
	again, err := cluster.Load(home, "nsk")
	if err != nil {
		t.Fatal(err)
	}
	c, err := pgx.Connect(context.Background(), again.ConnString(again.Primary(), ""))
	if err != nil {
		t.Fatalf("the cluster made again: %v", err)
	}
	c.Close(context.Background())
	destroyNetns(t, env, again)
}
