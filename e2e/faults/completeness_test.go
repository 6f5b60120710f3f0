package faults

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// The primary stopped in the middle of a tpcc run straight to it (nothing promoted): the
// step is cut by the fault. It is marked incomplete with its reason in result.json and the
// command exits 1; its analysis names the fault, not a saturated resource or a Little's law
// that fails; compare and the report leave the step out and say why, rather than rating it
// against a whole run (it was "larger than spread, −78.4%").
func TestTPCCPrimaryKilledMidRun(t *testing.T) {
	t.Parallel()
	h := clustertest.NewHandmade(t, 1)
	env := map[string]string{"AGBENCH_HOME": t.TempDir()}
	primary := h.ConnString(0, clustertest.HandmadeApp)
	if code, out, errs := e2etest.Run(t, env, "tpcc", "build", "--primary", primary, "--warehouses", "1"); code != 0 {
		t.Fatalf("build: exit %d\n%s\n%s", code, out, errs)
	}
	whole, cut := t.TempDir(), t.TempDir()
	run := func(results, duration string) (int, string, string) {
		return e2etest.Run(t, env, "tpcc", "run", "--primary", primary, "--vus", "2", "--rampup", "0s", "--duration", duration,
			"--results", results)
	}
	if code, out, errs := run(whole, "4s"); code != 0 {
		t.Fatalf("the run before the fault: exit %d\n%s\n%s", code, out, errs)
	}
	wait := e2etest.AfterNewOrdersOn(t, h.Admin(context.Background(), t, 0), 2*time.Second,
		func(ctx context.Context) error { return h.Stop(ctx, 0) })
	code, out, errs := run(cut, "8s")
	wait()
	t.Logf("tpcc run through the fault: exit %d\n%s\n%s", code, out, errs)
	if code != 1 {
		t.Errorf("exit %d after a step cut by a fault; want 1", code)
	}
	res := e2etest.ReadOneResult(t, cut)
	st := res.Steps[0]
	if st.Complete || !strings.Contains(st.IncompleteReason, "cut by a fault") || res.Complete {
		t.Errorf("step complete %v (%q), run complete %v: want the step incomplete, cut by a fault", st.Complete, st.IncompleteReason, res.Complete)
	}
	for _, bad := range []string{"saturated: locks", "saturated: CPU", "! littles-law"} {
		if strings.Contains(out, bad) {
			t.Errorf("the analysis judges the step cut by a fault (%q):\n%s", bad, out)
		}
	}
	if !strings.Contains(out, "saturated: Not judged: ") || !strings.Contains(out, "cut by a fault") {
		t.Errorf("the analysis does not say the fault is why it did not judge saturation:\n%s", out)
	}

	runs := func(dir string) string {
		m, _ := filepath.Glob(filepath.Join(dir, "*"))
		if len(m) != 1 {
			t.Fatalf("%s: %v", dir, m)
		}
		return m[0]
	}
	code, cmp, errs := e2etest.Run(t, nil, "compare", runs(whole), runs(cut))
	t.Logf("compare: exit %d\n%s\n%s", code, cmp, errs)
	if strings.Contains(cmp, "larger than spread") || !strings.Contains(cmp, "cut by a fault") || !strings.Contains(cmp, "left out") {
		t.Errorf("compare rates a step cut by a fault, or does not say it left it out:\n%s", cmp)
	}
	html := filepath.Join(t.TempDir(), "r.html")
	code, rep, errs := e2etest.Run(t, nil, "report", runs(whole), runs(cut), "-o", html)
	t.Logf("report: exit %d\n%s\n%s", code, rep, errs)
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for where, text := range map[string]string{"text": rep, "HTML": string(b)} {
		if strings.Contains(text, "larger than spread") || !strings.Contains(text, "cut by a fault") {
			t.Errorf("the report's %s rates the step cut by a fault or does not say why it left it out", where)
		}
	}
	// The main table leaves the step's figures out (its 27,576 NOPM stood beside the whole
	// run's), and so does the headline's peak.
	if main, _, _ := strings.Cut(rep, "where sessions landed"); !strings.Contains(main, "| incomplete ") || strings.Contains(rep, runs(cut)[len(runs(cut))-25:]+": peak") {
		t.Errorf("the report shows the figures of the step cut by a fault as measured:\n%s", rep)
	}
}
