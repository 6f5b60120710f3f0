package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/table"
)

// Bad input is refused before anything is made: exit 2, the flag named, no result folder.
func TestDrillBadInput(t *testing.T) {
	env := map[string]string{"AGBENCH_HOME": t.TempDir()}
	results := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
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
	} {
		code, _, errs := runCLI(t, env, append(c.args, "--results", results)...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %q", c.args, code, errs, c.want)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(results, "*")); len(m) != 0 {
		t.Fatalf("bad input left %v", m)
	}
}

// The command end to end: one planned failover on a sync cluster, the table, the verdict and
// result.json with the drill's sections.
func TestDrillCommand(t *testing.T) {
	clustertest.Require(t)
	home := clustertest.Home(t)
	clustertest.NewIn(t, home, clustertest.Options{Standbys: 1, Commit: cluster.CommitSync})
	results := t.TempDir()
	code, out, errs := runCLI(t, map[string]string{"AGBENCH_HOME": home}, "drill", "--cluster", "t", "--fault", "planned",
		"--cycles", "1", "--between", "300ms", "--vus", "2", "--read-vus", "1", "--results", results)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"writes back s", "sync commit: 0 of ", "cluster at the end: whole:"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	r := drillResultIn(t, results)
	run, err := r.DrillRun()
	if err != nil || run == nil || run.CyclesDone != 1 || run.Lost != 0 || run.Acked == 0 || !r.Complete {
		t.Fatalf("drill run %+v (%v), complete %v", run, err, r.Complete)
	}
	if dc, err := r.Steps[0].DrillCycle(); err != nil || dc == nil || !dc.Checked {
		t.Fatalf("cycle %+v (%v)", dc, err)
	}
}

// Review B3: a step whose window has no length has no error rate: "–", not "+Inf".
func TestDrillErrorRatesOfAnEmptyWindow(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st := &result.Step{Window: result.Window{Start: at, End: at}, Errors: []result.ErrorClass{{SQLState: "57P01", Count: 3}}}
	if got := errorRates(st); got != table.Absent {
		t.Errorf("0-second window: %q, want %q", got, table.Absent)
	}
	st.Window.End = at.Add(2 * time.Second)
	if got := errorRates(st); got != "57P01 1.5" {
		t.Errorf("2-second window: %q, want %q", got, "57P01 1.5")
	}
}

// drillResultIn reads the one drill result under results.
func drillResultIn(t *testing.T, results string) *result.Result {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(results, "*-drill", result.FileName))
	if len(m) != 1 {
		t.Fatalf("result files %v", m)
	}
	r, err := result.Read(m[0])
	if err != nil {
		t.Fatal(err)
	}
	return r
}
