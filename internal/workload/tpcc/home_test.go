package tpcc

import (
	"testing"

	"github.com/agbench/agbench/internal/segment"
	"github.com/agbench/agbench/internal/workload"
)

// TestHomeSegments checks that a run split into segments homes each segment's VUs on
// warehouses no other segment's VUs use, and that the whole run homes as it always did.
func TestHomeSegments(t *testing.T) {
	t.Parallel()
	for id := 0; id < 25; id++ {
		w, d := Home(workload.VU{ID: id, Of: 25}, 4)
		if w != id%4+1 || d != (id/4)%DistrictsPerWH+1 {
			t.Fatalf("whole run: VU %d homed on %d/%d", id, w, d)
		}
	}
	const vus, wh, of = 12, 5, 3
	owner := map[int]int{}
	pairs := map[[2]int]bool{}
	for i := 0; i < of; i++ {
		seg := segment.Segment{Index: i, Of: of}
		first, last := seg.Range(vus)
		for id := first; id < last; id++ {
			w, d := Home(workload.VU{ID: id, Of: vus, Segment: seg}, wh)
			if o, ok := owner[w]; ok && o != i {
				t.Fatalf("warehouse %d homes VUs of segments %d and %d", w, o, i)
			}
			owner[w] = i
			if pairs[[2]int{w, d}] {
				t.Fatalf("warehouse %d district %d homes two VUs", w, d)
			}
			pairs[[2]int{w, d}] = true
		}
	}
	if len(owner) != wh {
		t.Fatalf("homes used %d warehouses of %d", len(owner), wh)
	}
}
