package commands

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

func TestClusterCreateWithListener(t *testing.T) {
	t.Parallel()
	clustertest.Require(t)
	if code, _, errs := e2etest.Run(t, map[string]string{"AGBENCH_HOME": t.TempDir()}, "cluster", "create", "--listener=nonsense"); code != 2 || !strings.Contains(errs, "--listener") {
		t.Fatalf("bad --listener: %d %s", code, errs)
	}
	home := clustertest.Home(t)
	env := map[string]string{"AGBENCH_HOME": home}
	base, err := clustertest.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	lp, err := clustertest.FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	laddr := "127.0.0.1:" + strconv.Itoa(lp)
	code, out, errs := e2etest.Run(t, env, "cluster", "create", "--name", "cl", "--standbys", "1", "--base-port", strconv.Itoa(base),
		"--set", "fsync=off", "--listener="+laddr)
	if code != 0 {
		t.Fatalf("create: %d %s %s", code, out, errs)
	}
	t.Cleanup(func() { e2etest.Run(t, env, "cluster", "destroy", "--name", "cl") })
	topo, err := cluster.Load(home, "cl")
	if err != nil || topo.Listener == nil || topo.Listener.PID == 0 {
		t.Fatalf("topology's listener: %+v %v", topo.Listener, err)
	}
	pid := topo.Listener.PID
	inRecovery := func(port int) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgconn.Connect(ctx, "host=127.0.0.1 port="+strconv.Itoa(port)+" user="+topo.Superuser+" dbname="+topo.Database+
			" passfile="+topo.PassFile+" sslmode=disable")
		if err != nil {
			return "", err
		}
		defer c.Close(ctx)
		rs, err := c.Exec(ctx, "SELECT pg_is_in_recovery()").ReadAll()
		if err != nil {
			return "", err
		}
		return string(rs[0].Rows[0][0]), nil
	}
	if v, err := inRecovery(lp + 1); v != "t" {
		t.Fatalf("read-only port: %q %v", v, err)
	}
	if v, err := inRecovery(lp); v != "f" {
		t.Fatalf("main port: %q %v", v, err)
	}
	running := regexp.MustCompile(`listener: ` + regexp.QuoteMeta(laddr) + `.*running \(pid \d+\)`)
	if _, out, _ := e2etest.Run(t, env, "cluster", "status", "--name", "cl"); !running.MatchString(out) {
		t.Fatalf("status does not show the listener running:\n%s", out)
	}
	if code, out, errs := e2etest.Run(t, env, "cluster", "stop", "--name", "cl"); code != 0 {
		t.Fatalf("stop: %s %s", out, errs)
	}
	if cluster.Alive(pid) {
		t.Fatal("listener still running after cluster stop")
	}
	if _, out, _ := e2etest.Run(t, env, "cluster", "status", "--name", "cl"); !strings.Contains(out, "not running") {
		t.Fatalf("status after stop:\n%s", out)
	}
	if code, out, errs := e2etest.Run(t, env, "cluster", "start", "--name", "cl"); code != 0 {
		t.Fatalf("start: %s %s", out, errs)
	}
	if v, err := inRecovery(lp + 1); v != "t" {
		t.Fatalf("read-only port after start: %q %v", v, err)
	}
	topo, _ = cluster.Load(home, "cl")
	pid = topo.Listener.PID
	if code, out, errs := e2etest.Run(t, env, "cluster", "destroy", "--name", "cl"); code != 0 {
		t.Fatalf("destroy: %s %s", out, errs)
	}
	deadline := time.Now().Add(20 * time.Second)
	for cluster.Alive(pid) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if cluster.Alive(pid) {
		t.Fatal("listener still running after destroy")
	}
}
