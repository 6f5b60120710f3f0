package render

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
)

func TestMergedSaysSegmentsAndSpread(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	start := func(ms int) []result.SegmentStart {
		return []result.SegmentStart{{Step: 0, At: at, Began: at.Add(time.Duration(ms) * time.Millisecond)}}
	}
	r := &result.Result{Meta: result.Meta{Merged: &result.Merged{Of: 3, Missing: []int{1},
		Segments: []result.MergedSegment{{Index: 0, Host: "a", Complete: true, Starts: start(0)}, {Index: 2, Host: "b", Starts: start(3)}}}}}
	var b bytes.Buffer
	Merged(&b, r)
	for _, want := range []string{"segments  2 of 3 merged: 0 (a), 2 (b, incomplete)", "missing: 1 (the run is incomplete)", "step 1 began within 3.0 ms"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	Merged(&b, &result.Result{})
	if b.Len() != 0 {
		t.Fatalf("a run not merged: %q", b.String())
	}
}
