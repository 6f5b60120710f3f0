package experiment

import (
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/workload/tpcc"
)

// TestTPCCCheckMerged checks that a merged tpcc run compares the segments' summed NOPM with
// the server's once, and not when a segment is missing (the sums are short by its share);
// that the counts may differ by the New-Orders in flight at the windows' edges, one per
// session per edge, and by those run while the segments' windows differed, no more; and
// that the warning says those counts.
func TestTPCCCheckMerged(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// Three segments of one session each, 120 NOPM each over a minute; the last one's window
	// began and ended lateBy later than the others'.
	merged := func(clientNOPM float64, lateBy time.Duration, missing ...int) (*result.Result, []*result.Result) {
		var segs []*result.Result
		for i := range 3 {
			if len(missing) > 0 && missing[0] == i {
				continue
			}
			w := result.Window{Start: start, End: start.Add(time.Minute)}
			if i == 2 {
				w = result.Window{Start: start.Add(lateBy), End: start.Add(time.Minute + lateBy)}
			}
			segs = append(segs, &result.Result{Meta: result.Meta{Segment: &result.Segment{Index: i, Of: 3}},
				Steps: []result.Step{{VUs: 1, Complete: true, Window: w, Counters: map[string]float64{tpcc.CounterNOPM: 120}}}})
		}
		m := &result.Result{Meta: result.Meta{Merged: &result.Merged{Of: 3, Missing: missing}},
			Steps: []result.Step{{Complete: true, Window: result.Window{Start: start, End: start.Add(time.Minute + lateBy)},
				Counters: map[string]float64{result.TPCCNOPM: clientNOPM, result.TPCCServerNOPM: 360}}}}
		return m, segs
	}
	for _, c := range []struct {
		client float64
		lateBy time.Duration
		want   string // "" for no warning
	}{
		{360, 0, ""},
		{108, 0, "NOPM: client 108, server (district next order ids) 360: 70.0% apart: 252 New-Orders over segment 0's 60.0 s window"},
		// Three sessions, two edges each: six New-Orders apart and no more.
		{354, 0, ""},
		{353, 0, "where the segments' counts can differ by 6 in flight at the windows' edges (one per session per edge) and 0 committed while their windows differed from it (up to 0.0 s)"},
		// Segment 2 began and ended 1 s late: 2 s of its 120 NOPM, 4 New-Orders, more.
		{350, time.Second, ""},
		{349, time.Second, "can differ by 6 in flight at the windows' edges (one per session per edge) and 4 committed while their windows differed from it (up to 2.0 s)"},
	} {
		m, segs := merged(c.client, c.lateBy)
		(&TPCCRun{}).CheckMerged(m, segs)
		w := m.Steps[0].Warnings
		if c.want == "" && len(w) != 0 || c.want != "" && (len(w) != 1 || !strings.Contains(w[0], c.want)) {
			t.Errorf("client %v, server 360, segment 2 late by %v: warnings %q, want %q", c.client, c.lateBy, w, c.want)
		}
	}
	short, segs := merged(240, 0, 2)
	(&TPCCRun{}).CheckMerged(short, segs)
	if w := short.Steps[0].Warnings; len(w) != 0 {
		t.Fatalf("a merge lacking a segment compared its short sums: %q", w)
	}
}
