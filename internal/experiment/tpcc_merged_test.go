package experiment

import (
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// TestTPCCCheckMerged checks that a merged tpcc run compares the segments' summed NOPM with
// the server's once, and not when a segment is missing (the sums are short by its share).
func TestTPCCCheckMerged(t *testing.T) {
	t.Parallel()
	merged := func(clientNOPM float64, missing ...int) *result.Result {
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		return &result.Result{Meta: result.Meta{Merged: &result.Merged{Of: 3, Missing: missing}},
			Steps: []result.Step{{Complete: true, Window: result.Window{Start: start, End: start.Add(time.Minute)},
				Counters: map[string]float64{result.TPCCNOPM: clientNOPM, result.TPCCServerNOPM: 360}}}}
	}
	agree := merged(360)
	(&TPCCRun{}).CheckMerged(agree)
	if w := agree.Steps[0].Warnings; len(w) != 0 {
		t.Fatalf("sums equal to the server's warned: %q", w)
	}
	apart := merged(108)
	(&TPCCRun{}).CheckMerged(apart)
	if w := apart.Steps[0].Warnings; len(w) != 1 || !strings.Contains(w[0], "NOPM: client 108, server (district next order ids) 360") {
		t.Fatalf("sums apart from the server's: warnings %q, want one", w)
	}
	short := merged(240, 2)
	(&TPCCRun{}).CheckMerged(short)
	if w := short.Steps[0].Warnings; len(w) != 0 {
		t.Fatalf("a merge lacking a segment compared its short sums: %q", w)
	}
}
