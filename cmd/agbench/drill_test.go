package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// Bad input is refused before anything is made: exit 2, the flag named, no result folder.
func TestDrillBadInput(t *testing.T) {
	results := t.TempDir()
	wantRefused(t, map[string]string{"AGBENCH_HOME": t.TempDir()}, filepath.Join(results, "*"), []badInput{
		{[]string{"drill", "--cluster", "lab"}, "--fault is required"},
		{[]string{"drill", "--fault", "unplug"}, `--fault "unplug"`},
		{[]string{"drill", "--fault", "planned", "--cycles", "0"}, "--cycles 0"},
		{[]string{"drill", "--fault", "planned", "--workload", "bogus"}, `--workload "bogus"`},
		{[]string{"drill", "--fault", "observe", "--workload", "tpcc"}, "--workload tpcc: not with --fault observe"},
		{[]string{"drill", "--fault", "planned", "--vus", "0", "--read-vus", "-1"}, "--read-vus -1"},
		{[]string{"drill", "--fault", "planned", "--between", "0s", "--commit-wait", "-1s"}, "--commit-wait"},
		{[]string{"drill", "--fault", "kill-primary", "--primary", "host=127.0.0.1 port=5432"}, "only into servers agbench started"},
		{[]string{"drill", "--fault", "freeze-primary", "--detect-timeout", "0s"}, "--detect-timeout 0s"},
		{[]string{"drill", "--fault", "planned", "--cluster", "no-such"}, "no-such"},
		{[]string{"drill", "--fault", "planned", "extra"}, "extra"},
		{[]string{"drill", "--fault", "wal-full", "--wal-fs-size", "1M"}, "--wal-fs-size 1.0 MiB"},
		{[]string{"drill", "--fault", "wal-full", "--wal-fs-size", "lots"}, `--wal-fs-size "lots"`},
	}, "--results", results)
}

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
	_, env, _ := syncCluster(t)
	results := t.TempDir()
	code, out, errs := runCLI(t, env, "drill", "--cluster", "t", "--fault", "planned",
		"--cycles", "1", "--between", "300ms", "--vus", "2", "--read-vus", "1", "--results", results)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"writes back s", "sync commit: 0 of ", "cluster at the end: whole:"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	r := readOneResult(t, results)
	run, err := r.DrillRun()
	if err != nil || run == nil || run.CyclesDone != 1 || run.Lost != 0 || run.Acked == 0 || !r.Complete {
		t.Fatalf("drill run %+v (%v), complete %v", run, err, r.Complete)
	}
	if dc, err := r.Steps[0].DrillCycle(); err != nil || dc == nil || !dc.Checked {
		t.Fatalf("cycle %+v (%v)", dc, err)
	}
}
