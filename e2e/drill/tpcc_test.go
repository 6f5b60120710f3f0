package drill

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agbench/agbench/e2e/e2etest"
)

// --workload tpcc end to end on a sync cluster: refused (exit 2, naming agbench tpcc build,
// nothing made) before the schema is built; then one planned and one kill-primary cycle of
// 2 TPC-C terminals on 1 warehouse: every acknowledged New-Order on the new primary, the
// consistency conditions hold, the verdict says so, and result.json keeps the checks.
func TestDrillTPCC(t *testing.T) {
	t.Parallel()
	_, env, _ := syncCluster(t)
	empty := t.TempDir()
	code, _, errs := e2etest.Run(t, env, "drill", "--cluster", "t", "--fault", "planned", "--workload", "tpcc", "--cycles", "1", "--results", empty)
	if code != 2 || !strings.Contains(errs, "agbench tpcc build") {
		t.Fatalf("tpcc without its schema: exit %d, stderr %q; want 2 naming agbench tpcc build", code, errs)
	}
	e2etest.WantNothing(t, filepath.Join(empty, "*"))
	if code, out, errs := e2etest.Run(t, env, "tpcc", "build", "--cluster", "t", "--warehouses", "1"); code != 0 {
		t.Fatalf("build: exit %d\n%s\n%s", code, out, errs)
	}
	for _, fault := range []string{"planned", "kill-primary"} {
		results := t.TempDir()
		code, out, errs := e2etest.Run(t, env, "drill", "--cluster", "t", "--fault", fault, "--workload", "tpcc", "--cycles", "1",
			"--between", "500ms", "--vus", "2", "--read-vus", "1", "--results", results)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", fault, code, out, errs)
		}
		for _, want := range []string{"sync commit: 0 of ", "acknowledged New-Orders lost in 1 failover (" + fault + ", tpcc); consistency checks passed",
			"TPC-C consistency conditions: 11 of 11 hold", "cluster at the end: whole:"} {
			if !strings.Contains(out, want) {
				t.Fatalf("%s: output lacks %q:\n%s", fault, want, out)
			}
		}
		r := e2etest.ReadOneResult(t, results)
		run, err := r.DrillRun()
		if err != nil || run == nil || run.Workload != "tpcc" || run.CyclesDone != 1 || run.Lost == nil || *run.Lost != 0 || *run.Acked == 0 || run.ChecksFailed != 0 {
			t.Fatalf("%s: drill run %+v (%v)", fault, run, err)
		}
		dc, err := r.Steps[0].DrillCycle()
		if err != nil || dc == nil || !dc.Checked || dc.TPCC == nil || len(dc.TPCC.Checks) != 11 || dc.TPCC.Transactions < dc.Acked || dc.WriteBackSeconds == nil {
			t.Fatalf("%s: cycle %+v (%v)", fault, dc, err)
		}
	}
}
