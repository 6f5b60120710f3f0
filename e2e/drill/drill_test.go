package drill

import (
	"strings"
	"testing"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// syncCluster makes the cluster "t" (a primary and one sync standby) in a home of its own
// for a drill (or a run) end to end, and returns the environment that runs agbench on it and
// the cluster.
func syncCluster(t *testing.T) (home string, env map[string]string, topo *cluster.Topology) {
	t.Helper()
	clustertest.Require(t)
	home = clustertest.Home(t)
	topo = clustertest.NewIn(t, home, clustertest.Options{Standbys: 1, Commit: cluster.CommitSync})
	return home, map[string]string{"AGBENCH_HOME": home}, topo
}

// The command end to end: one planned failover on a sync cluster, the table, the verdict and
// result.json with the drill's sections.
func TestDrillCommand(t *testing.T) {
	t.Parallel()
	_, env, _ := syncCluster(t)
	results := t.TempDir()
	code, out, errs := e2etest.Run(t, env, "drill", "--cluster", "t", "--fault", "planned",
		"--cycles", "1", "--between", "300ms", "--vus", "2", "--read-vus", "1", "--results", results)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"writes back s", "sync commit: 0 of ", "cluster at the end: whole:"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	r := e2etest.ReadOneResult(t, results)
	run, err := r.DrillRun()
	if err != nil || run == nil || run.CyclesDone != 1 || run.Lost == nil || *run.Lost != 0 || *run.Acked == 0 || !r.Complete {
		t.Fatalf("drill run %+v (%v), complete %v", run, err, r.Complete)
	}
	if dc, err := r.Steps[0].DrillCycle(); err != nil || dc == nil || !dc.Checked {
		t.Fatalf("cycle %+v (%v)", dc, err)
	}
}
