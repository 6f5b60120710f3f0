package cluster_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cgroup"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/proc"
	"github.com/agbench/agbench/internal/result"
	"github.com/jackc/pgx/v5"
)

// requireHosts skips a test that needs control groups (root) when this machine has none.
func requireHosts(t *testing.T) *cgroup.System {
	t.Helper()
	clustertest.Require(t)
	s, err := cgroup.Detect()
	if err != nil {
		if os.Getenv("AGBENCH_REQUIRE_CGROUP") == "1" {
			t.Fatal(err)
		}
		t.Skipf("no control groups: %v", err)
	}
	return s
}

func postmaster(t *testing.T, n *cluster.Node) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(n.DataDir, "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func TestModelledHostsHoldEachNodesProcessesAndNotAgbench(t *testing.T) {
	requireHosts(t)
	topo := clustertest.New(t, clustertest.Options{Standbys: 1, Name: "hproc", Host: cgroup.Budget{CPUs: 0.5, Memory: 256 << 20},
		Settings: map[string]string{"shared_buffers": "32MB"}})
	if topo.Hosts == nil || topo.Hosts.CPUs != 0.5 || topo.Hosts.Memory != 256<<20 {
		t.Fatalf("host model %+v", topo.Hosts)
	}
	saved, err := cluster.LoadFile(filepath.Join(topo.Dir, "topology.json"))
	if err != nil || saved.Hosts == nil || saved.Nodes[0].Group == nil {
		t.Fatalf("the topology file does not record the host model: %+v %v", saved, err)
	}
	// A client session forks a backend: it must be born in the node's group too.
	c := connect(t, topo, topo.Primary())
	var backend int
	if err := c.QueryRow(context.Background(), `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		t.Fatal(err)
	}
	for _, n := range topo.Nodes {
		procs, err := n.Group.Procs()
		if err != nil {
			t.Fatal(err)
		}
		pm := postmaster(t, &n)
		kids := cluster.Children(pm)
		if len(kids) < 3 {
			t.Fatalf("%s: postmaster %d has children %v", n.Name, pm, kids)
		}
		for _, p := range append(kids, pm) {
			if !slices.Contains(procs, p) {
				t.Errorf("%s: process %d (postmaster %d or its child) is not in group %s: %v", n.Name, p, pm, n.Group.Name, procs)
			}
		}
		if slices.Contains(procs, os.Getpid()) {
			t.Errorf("%s: agbench's own process is in the node's group", n.Name)
		}
		for _, o := range topo.Nodes {
			if o.Name != n.Name && o.Group.Name == n.Group.Name {
				t.Errorf("%s and %s share group %s", n.Name, o.Name, n.Group.Name)
			}
		}
	}
	procs, _ := topo.Primary().Group.Procs()
	if !slices.Contains(procs, backend) {
		t.Errorf("backend %d not in the primary's group %v", backend, procs)
	}
	st := topo.Status(context.Background())
	for _, ns := range st.Nodes {
		if ns.Budget == nil || ns.Budget.CPUs != 0.5 || ns.Budget.Memory != 256<<20 || ns.Budget.Processes < 3 || ns.Budget.Error != "" {
			t.Errorf("status of %s: %+v", ns.Name, ns.Budget)
		}
	}
}

// A CPU-bound query on one node cannot use more than its budget. The node's postmaster and
// its sessions' backends run under the quota of the node's group, which holds the configured
// budget; and the kernel enforces that group's quota: two sessions that would each keep a
// CPU busy are throttled and, by the group's own CPU accounting, use no more than the quota
// allows. For the enforcement to show however starved the machine is, the quota is then
// lowered to a fiftieth of a core, which a session exceeds even when the machine gives it
// only a few hundredths of a CPU (the configured 0.3 cores may never be reached then).
func TestModelledHostCapsACPUBoundQuery(t *testing.T) {
	sys := requireHosts(t)
	const budget, starved = 0.3, 0.02
	topo := clustertest.New(t, clustertest.Options{Name: "hcpu", Host: cgroup.Budget{CPUs: budget}})
	n := topo.Primary()
	g := n.Group
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conns := make([]*pgx.Conn, 2)
	pids := []int{postmaster(t, n)}
	for i := range conns {
		conns[i] = connect(t, topo, n)
		var pid int
		if err := conns[i].QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	root := sys.Roots["cpu"]
	if sys.Version == 1 {
		root = filepath.Dir(root) // CgroupQuota finds the hierarchy under the mount's parent
	}
	for _, pid := range pids {
		data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cgroup"))
		if err != nil {
			t.Fatal(err)
		}
		if q, from := result.CgroupQuota(root, data); q != budget || filepath.Dir(from) != g.CPU {
			t.Fatalf("process %d runs under a quota of %v cores from %q, want %v from group %s", pid, q, from, budget, g.CPU)
		}
	}
	if err := g.SetCPUs(starved); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.SetCPUs(budget) }) // before the node stops
	before, err := g.Read()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(conns))
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = c.Exec(ctx, `SET statement_timeout = '120s'; SELECT count(*) FROM generate_series(1, 100000000000)`)
		}()
	}
	// Until the group has been throttled, and for two seconds, so that the accounting's
	// edges are small against the window.
	var after cgroup.Usage
	for deadline := time.Now().Add(110 * time.Second); ; {
		time.Sleep(100 * time.Millisecond)
		if after, err = g.Read(); err != nil {
			t.Fatal(err)
		}
		if after.Throttled > before.Throttled && after.At.Sub(before.At) > 2*time.Second {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the quota never throttled two CPU-bound sessions in %v: %+v -> %+v", after.At.Sub(before.At), before, after)
		}
	}
	cancel()
	wg.Wait()
	for _, err := range errs {
		if err == nil {
			t.Fatal("a CPU-bound query ended by itself")
		}
	}
	cpus, err := result.ParseCPUList(g.CPUList)
	if err != nil {
		t.Fatal(err)
	}
	wall := after.At.Sub(before.At).Seconds()
	used := after.CPUSeconds - before.CPUSeconds
	// Slack for the accounting's edges: two periods' quota, and 20 ms per CPU the group may
	// run on for a scheduler tick's overrun and runtime handed out in slices.
	if limit := starved*wall + 2*starved*cgroup.Period/1e6 + 0.02*float64(len(cpus)); used > limit {
		t.Fatalf("the node used %.3f CPU seconds in %.2f s: more than its %v-core quota allows (%.3f)", used, wall, starved, limit)
	}
	t.Logf("%.3f CPU seconds in %.2f s (%.3f cores of %v); throttled in %d of %d periods", used, wall, used/wall, starved,
		after.Throttled-before.Throttled, after.Periods-before.Periods)
}

// A table larger than the node's memory budget does not stay in its page cache: the second
// scan reads the table back from storage (the scanning backend's read_bytes in /proc/PID/io:
// the bytes it caused to be fetched from storage). Without the budget this machine's memory
// would hold the table and the second scan would read nothing from storage. (The group's
// workingset_refault_file counted fewer once, 132 of 193 MB, when the kernel had dropped the
// evicted pages' shadow entries under memory pressure: a refault is only counted while its
// shadow entry lives, so it is no measure of bytes read back.)
func TestModelledHostMemoryBudgetHoldsThePageCache(t *testing.T) {
	requireHosts(t)
	const memory = 128 << 20
	topo := clustertest.New(t, clustertest.Options{Name: "hmem", Host: cgroup.Budget{Memory: memory},
		Settings: map[string]string{"shared_buffers": "16MB"}})
	g := topo.Primary().Group
	c := connect(t, topo, topo.Primary())
	ctx := context.Background()
	exec1(t, c, `CREATE TABLE big (id int, pad text) WITH (fillfactor = 100)`)
	exec1(t, c, `INSERT INTO big SELECT g, repeat('x', 900) FROM generate_series(1, 320000) g`)
	exec1(t, c, `CHECKPOINT`)
	var size int64
	if err := c.QueryRow(ctx, `SELECT pg_relation_size('big')`).Scan(&size); err != nil {
		t.Fatal(err)
	}
	if size < 2*memory {
		t.Fatalf("table of %d bytes: want at least twice the budget", size)
	}
	// One process scans (no parallel workers, whose reads would be theirs).
	exec1(t, c, `SET max_parallel_workers_per_gather = 0`)
	exec1(t, c, `SELECT count(*) FROM big`)
	var pid int
	if err := c.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	before := storageReadBytes(t, pid)
	exec1(t, c, `SELECT count(*) FROM big`)
	reread := storageReadBytes(t, pid) - before
	if reread < size-memory {
		t.Fatalf("the second scan of a %d-byte table read back %d bytes that the budget had evicted, on a node with %d bytes of memory", size, reread, memory)
	}
	u, err := g.Read()
	if err != nil || u.Memory > memory || u.Cache > memory {
		t.Fatalf("group use %+v over its budget %d (%v)", u, memory, err)
	}
	t.Logf("table %d bytes; the second scan read back %d bytes evicted under the budget; group memory %d, page cache %d", size, reread, u.Memory, u.Cache)
}

// refaults reads the group's count of file pages evicted and read again.
// storageReadBytes is process pid's read_bytes from /proc/PID/io: the bytes it caused to be
// fetched from storage.
func storageReadBytes(t *testing.T, pid int) int64 {
	t.Helper()
	io, err := proc.Host.IO(pid)
	if err != nil {
		t.Skipf("no task IO accounting: %v", err)
	}
	return int64(io.ReadBytes)
}

// groupsOf lists the control groups under any hierarchy root whose name starts agbench-NAME-.
// groupsOf lists the groups of the cluster name under home: by its own prefix, which names its
// folder too (by the name alone, a test run beside another, in another checkout, saw the
// other's groups of a cluster of the same name and failed "destroy left groups").
func groupsOf(t *testing.T, s *cgroup.System, home, name string) []string {
	t.Helper()
	prefix := cluster.GroupPrefix(cluster.ClusterDir(home, name), name)
	var out []string
	for _, root := range s.Roots {
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			if e.IsDir() && strings.HasPrefix(e.Name(), prefix) {
				out = append(out, filepath.Join(root, e.Name()))
			}
		}
	}
	return out
}

// homeOf is the agbench home a test's cluster was made under.
func homeOf(topo *cluster.Topology) string { return filepath.Dir(filepath.Dir(topo.Dir)) }

func TestModelledHostsRemovedOnDestroyAfterACrash(t *testing.T) {
	s := requireHosts(t)
	topo := clustertest.New(t, clustertest.Options{Standbys: 1, Name: "hcrash", Host: cgroup.Budget{CPUs: 0.5}})
	if len(groupsOf(t, s, homeOf(topo), "hcrash")) == 0 {
		t.Fatal("no groups made")
	}
	// The primary's postmaster dies; its children live on, orphaned, in its group.
	pm := postmaster(t, topo.Primary())
	if err := syscall.Kill(pm, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := topo.Destroy(context.Background()); err != nil {
		t.Fatal(err)
	}
	if left := groupsOf(t, s, homeOf(topo), "hcrash"); len(left) > 0 {
		t.Fatalf("destroy left groups: %v", left)
	}
}

func TestInterruptedCreateLeavesNoGroup(t *testing.T) {
	s := requireHosts(t)
	home := clustertest.Home(t)
	base, err := clustertest.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sawGroups bool
	w := progressFunc(func(line string) {
		// Interrupt once the standby's copy starts, when the groups exist and the primary runs in one.
		if strings.HasPrefix(line, "pg_basebackup") {
			sawGroups = len(groupsOf(t, s, home, "hint")) > 0
			cancel()
		}
	})
	_, err = cluster.Create(ctx, cluster.CreateOptions{Home: home, Name: "hint", Standbys: 1, Commit: cluster.CommitAsync,
		BasePort: base, Host: cgroup.Budget{CPUs: 0.5}, Settings: []string{"fsync=off"}, Progress: w})
	if err == nil {
		t.Fatal("create was not interrupted")
	}
	if !sawGroups {
		t.Fatal("the groups did not exist when create was interrupted")
	}
	if left := groupsOf(t, s, home, "hint"); len(left) > 0 {
		t.Fatalf("an interrupted create left groups: %v", left)
	}
	if _, err := os.Stat(cluster.ClusterDir(home, "hint")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an interrupted create left its folder: %v", err)
	}
}

func TestModelledHostsBadInputMakesNothing(t *testing.T) {
	s := requireHosts(t)
	home := clustertest.Home(t)
	for _, o := range []cluster.CreateOptions{
		{Host: cgroup.Budget{CPUs: float64(len(s.CPUs) + 1)}},
		{Host: cgroup.Budget{CPUs: 0.9}, Standbys: 2},
		{Host: cgroup.Budget{Memory: 100 << 20}},
	} {
		o.Home, o.Name, o.Commit, o.BasePort = home, "hbad", cluster.CommitAsync, 20000
		_, err := cluster.Create(context.Background(), o)
		if !agerr.IsBadInput(err) {
			t.Errorf("%+v: %v", o, err)
		}
		if _, err := os.Stat(cluster.ClusterDir(home, "hbad")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%+v made its folder", o)
		}
		if left := groupsOf(t, s, home, "hbad"); len(left) > 0 {
			t.Errorf("%+v made groups %v", o, left)
		}
	}
}

type progressFunc func(string)

func (f progressFunc) Write(b []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f(line)
	}
	return len(b), nil
}
