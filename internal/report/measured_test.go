package report

import (
	"strings"
	"testing"
)

// A run whose steps finished no operation (tpcc run --keying over 2 s) measured nothing:
// its 0 NOPM is no peak, and the headline says NOPM was not measured.
func TestHeadlineOfANothingMeasuredRun(t *testing.T) {
	r := tpccStudy().result(t)
	for i := range r.Steps {
		st := &r.Steps[i]
		for _, op := range st.Ops {
			op.Count, op.Latency.Count = 0, 0
		}
		st.Counters["nopm"], st.Counters["tpm"] = 0, 0
		st.Complete, st.IncompleteReason = false, "no successful operation in the window (0 failed)"
	}
	e := build(t, NewRun("r", r))[0]
	if h := e.Headline(); strings.Contains(h, "peak 0") || !strings.Contains(h, "NOPM not measured") {
		t.Errorf("headline %q", h)
	}
}

// A drill's result is not a load curve: the report draws no knee and gives no load-curve
// verdict (window-short, not-steady, Little's law) for its cycles; the same steps under
// another command are analysed.
func TestDrillResultIsNotAnalysedAsALoadCurve(t *testing.T) {
	r := tpccStudy().result(t)
	r.Meta.Command = "drill"
	run := NewRun("r", r)
	build(t, run)
	if run.AnalysedHere || len(run.Analysis) > 0 {
		t.Errorf("a drill result was analysed as a load curve: %+v", run.Analysis)
	}
	other := NewRun("r", tpccStudy().result(t))
	build(t, other)
	if !other.AnalysedHere {
		t.Error("the same steps of tpcc run were not analysed")
	}
}

// The same experiment of two studies (the demo's ror-hosts and ror-quick) in one report:
// each run is named by its study, so that no two variants share a name.
func TestRunsOfTwoStudiesAreNamedByTheirStudy(t *testing.T) {
	a := NewRun("results/ror-hosts-20261124T055642Z/01-stress/20261124T055650Z-stress", tpccStudy().result(t))
	b := NewRun("results/ror-quick-20261124T060231Z/01-stress/20261124T060240Z-stress/result.json", tpccStudy().result(t))
	exps := build(t, a, b)
	if a.Label != "ror-hosts stress" || b.Label != "ror-quick stress" {
		t.Fatalf("labels %q and %q", a.Label, b.Label)
	}
	names := map[string]bool{}
	for _, v := range exps[0].Variants {
		if names[v.Name] {
			t.Errorf("two variants named %q", v.Name)
		}
		names[v.Name] = true
	}
}
