package faults

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// A sync-commit cluster whose one synchronous standby is stopped 2 s after the first
// committed insert of a stress of inserts: every commit then waits (IPC:SyncRep) to the window's end. (A commit that only
// took an xid, SELECT txid_current(), writes no WAL before its commit record and does not
// wait for the standby, but for the rare one that extends pg_xact.) "What saturated" says
// the commits waited for a standby that was down, from when, as the samplers measured it (gone from the primary's pg_stat_replication, the
// sampler's session to it lost), and never that the synchronous standby saturated. No
// operation completed after, so the run is incomplete (exit 1).
func TestSyncStandbyStoppedIsNoSaturation(t *testing.T) {
	t.Parallel()
	_, env, topo := syncCluster(t)
	watch := insertTarget(t, topo)
	standby := topo.Standbys()[0].Name
	wait := e2etest.AfterRowsOn(t, watch, "written", 2*time.Second, func(ctx context.Context) error { return topo.StopNode(ctx, standby) })
	results := t.TempDir()
	code, out, errs := e2etest.Run(t, env, "stress", "--cluster", "t", "-q", "INSERT INTO written VALUES (1)",
		"--threads", "2", "--duration", "8s", "--results", results)
	wait()
	if code != 1 || !strings.Contains(out, "the load was not running when it closed") {
		t.Errorf("exit %d, want 1 (the load was not running when the window closed)\n%s\n%s", code, out, errs)
	}
	want := "commits waited for the synchronous standby " + standby + ", which was down from "
	if !strings.Contains(out, want) || strings.Contains(out, "synchronous standby saturated") {
		t.Errorf("the output does not say the synchronous standby was down (%q), or calls it saturated:\n%s", want, out)
	}
	res := e2etest.ReadOneResult(t, results)
	var run analyze.Run
	if err := json.Unmarshal(res.Analysis, &run); err != nil {
		t.Fatal(err)
	}
	s := run.Variants[0].Result.Saturated
	t.Logf("saturated: %s", s.Sentence)
	if s.Resource != analyze.ResSyncAway || !strings.Contains(s.Sentence, "pg_stat_replication") {
		t.Errorf("saturation %+v: want %q with what the samplers measured", s, analyze.ResSyncAway)
	}
	t.Logf("throughput %v at %v; VUs without a completed operation %+v", res.Steps[0].Throughput["*"].V, res.Steps[0].Throughput["*"].T, res.Steps[0].VUQuiet)
	// The report says it too, in its findings and its summary's short line.
	html := t.TempDir() + "/r.html"
	code, out, errs = e2etest.Run(t, nil, "report", results, "-o", html)
	if b, _ := os.ReadFile(html); code != 0 || !strings.Contains(out, want) || !strings.Contains(string(b), "not saturated: commits waited for a synchronous standby that was down or not answering") {
		t.Errorf("report: exit %d; the text or the HTML does not say the standby was down\n%s\n%s", code, out, errs)
	}
	x, err := res.Steps[0].Sample()
	if err != nil || x == nil {
		t.Fatalf("sample section %v, %v", x, err)
	}
	for _, a := range x.Nodes[topo.Primary().Name].Absences {
		t.Logf("absence %+v", a)
	}
	for name, n := range x.Nodes {
		if n.LostAt != nil {
			t.Logf("node %s lost at %.2f s", name, *n.LostAt)
		}
	}
}

// The same cluster's synchronous standby frozen (SIGSTOP) for 7 s, 3 s after the load
// starts, in a 14 s window: it stays in the primary's pg_stat_replication, so only its
// silence says it was not there (no reply for 5 s or more while WAL waited for its flush).
// "What saturated" says it stopped answering, never that it saturated; the load goes on
// after, so the run exits 0.
func TestSyncStandbyFrozenIsNoSaturation(t *testing.T) {
	t.Parallel()
	_, env, topo := syncCluster(t)
	watch := insertTarget(t, topo)
	standby := topo.Standbys()[0].Name
	wait := e2etest.AfterRowsOn(t, watch, "written", 3*time.Second, func(ctx context.Context) error {
		f, err := topo.FreezeNode(ctx, standby)
		if err != nil {
			return err
		}
		time.Sleep(7 * time.Second)
		return f.Thaw()
	})
	results := t.TempDir()
	code, out, errs := e2etest.Run(t, env, "stress", "--cluster", "t", "-q", "INSERT INTO written VALUES (1)",
		"--threads", "2", "--duration", "14s", "--results", results)
	wait()
	if code != 0 {
		t.Errorf("exit %d, want 0 (the load went on after)\n%s\n%s", code, out, errs)
	}
	want := "commits waited for the synchronous standby " + standby + ", which stopped answering from "
	if !strings.Contains(out, want) || strings.Contains(out, "synchronous standby saturated") {
		t.Errorf("the output does not say the synchronous standby stopped answering (%q), or calls it saturated:\n%s", want, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "saturated:") {
			t.Log(line)
		}
	}
	res := e2etest.ReadOneResult(t, results)
	if x, err := res.Steps[0].Sample(); err == nil && x != nil {
		t.Logf("absences %+v", x.Nodes[topo.Primary().Name].Absences)
	}
}

// syncCluster makes the cluster "t" (a primary and one sync standby) of the test's own, in
// a home of its own, and returns the environment that runs agbench on it and the cluster.
func syncCluster(t *testing.T) (home string, env map[string]string, topo *cluster.Topology) {
	t.Helper()
	clustertest.Require(t)
	home = clustertest.Home(t)
	topo = clustertest.NewIn(t, home, clustertest.Options{Standbys: 1, Commit: cluster.CommitSync})
	return home, map[string]string{"AGBENCH_HOME": home}, topo
}

// insertTarget makes a table to insert into on topo's primary, and returns a superuser's
// session there.
func insertTarget(t *testing.T, topo *cluster.Topology) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	watch, err := pgx.Connect(ctx, topo.ConnString(topo.Primary(), ""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := watch.Exec(ctx, "CREATE TABLE written (n int)"); err != nil {
		t.Fatal(err)
	}
	return watch
}
