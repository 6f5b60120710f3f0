package report

import (
	"slices"
	"testing"

	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/result"
)

// In a report of two runs, warnings group by what they say (the verdict's code), not by the
// run they came from; a rule that could not be judged is said apart ("unjudged") and is no
// warning.
func TestWarningsGroupByKindNotByRun(t *testing.T) {
	run := func(label string) *Run {
		return &Run{Label: label, Result: &result.Result{Complete: true}, Analysis: []VariantAnalysis{{Analysis: analyze.Analysis{Verdicts: []analyze.Verdict{
			{Code: analyze.VWindowShort, Message: "measured window of 3 s at 1 thread is shorter than 60 s (" + label + ")"},
			{Code: analyze.VBusyHost, Message: "not judged: the servers' CPU was not measured", NotJudged: true},
		}}}}}
	}
	e := &Experiment{Command: "stress", Runs: []*Run{run("a"), run("b")}}
	main, groups := GroupWarnings(e.Findings())
	if len(groups) != 1 || groups[0].Key != analyze.VWindowShort || len(groups[0].Texts) != 2 {
		t.Errorf("groups %+v, want one window-short group of 2", groups)
	}
	var unjudged []string
	for _, f := range main {
		if f.Kind == "unjudged" {
			unjudged = append(unjudged, f.Text)
		}
	}
	want := []string{"a: busy-host: not judged: the servers' CPU was not measured", "b: busy-host: not judged: the servers' CPU was not measured"}
	if !slices.Equal(unjudged, want) {
		t.Errorf("unjudged %q, want %q", unjudged, want)
	}
}
