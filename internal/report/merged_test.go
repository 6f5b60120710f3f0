package report

import (
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// TestReportSaysSegments checks that the report of a merged run says so where it describes
// the run: the segments merged, their hosts, those missing and how far apart they began.
func TestReportSaysSegments(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	start := func(ms int) []result.SegmentStart {
		return []result.SegmentStart{{Step: 0, At: at, Began: at.Add(time.Duration(ms) * time.Millisecond)}}
	}
	r := &result.Result{Meta: result.Meta{Started: at, Merged: &result.Merged{Of: 3, Missing: []int{1},
		Segments: []result.MergedSegment{{Index: 0, Host: "a", Complete: true, Starts: start(0)}, {Index: 2, Host: "b", Complete: true, Starts: start(3)}}}}}
	v := runViewOf(&Run{Label: "merged", Result: r})
	for _, want := range []string{"2 of 3 merged: 0 (a), 2 (b)", "missing: 1 (the run is incomplete)", "step 1 began within 3.0 ms"} {
		if !strings.Contains(strings.Join(v.Segments, "\n"), want) {
			t.Errorf("the run's view lacks %q: %q", want, v.Segments)
		}
	}
	if v := runViewOf(&Run{Label: "one", Result: &result.Result{Meta: result.Meta{Started: at}}}); len(v.Segments) != 0 {
		t.Fatalf("a run not merged: %q", v.Segments)
	}
}

// A segment's result names its steps by its share of the whole run's load, naming the
// segment, never by the whole run's load alone.
func TestReportSaysASegmentsShare(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	r := &result.Result{Meta: result.Meta{Command: "stress", Started: at, Segment: &result.Segment{Index: 1, Of: 3, Run: "r"}},
		Complete: true, Steps: []result.Step{{Params: map[string]string{"threads": "8"}, VUs: 3, Complete: true,
			Window: result.Window{Start: at, End: at.Add(time.Second)}, Ops: map[string]*result.Op{"query": {Count: 10}}}}}
	exps, err := Build([]*Run{NewRun("seg1", r)})
	if err != nil {
		t.Fatal(err)
	}
	if len(exps) != 1 || len(exps[0].Points) != 1 || exps[0].Points[0] != "segment 1/3: 3 of 8 threads" {
		t.Fatalf("points %q, want the segment's share", exps[0].Points)
	}
}
