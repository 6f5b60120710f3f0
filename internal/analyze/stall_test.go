package analyze

import (
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// A stretch of ticks without a completed operation is a stall when the operations are
// short, and not when each takes seconds (a long scan completes none for seconds).
func TestStalled(t *testing.T) {
	t0 := time.Now()
	st := result.Step{VUs: 2, Window: result.Window{Start: t0, End: t0.Add(8 * time.Second)},
		Throughput: map[string]result.TimeSeries{"*": {Start: t0, T: []float64{1, 2, 3, 4, 5, 6, 7, 8}, V: []float64{500, 480, 0, 0, 0, 490, 510, 500}}}}
	sec, from := longestStall([]result.Step{st})
	if sec != 3 || from != 2 {
		t.Fatalf("stall %v s from %v s, want 3 from 2", sec, from)
	}
	for _, c := range []struct {
		p50  float64
		want bool
	}{{1, true}, {400, false}} {
		v := stalled([]Step{{Load: 2, StallSec: sec, StallFrom: from, P50Ms: c.p50}}, "threads")
		if (v != nil) != c.want || v != nil && !strings.Contains(v.Message, "from 2.0 s to 5.0 s") {
			t.Errorf("p50 %v ms: verdict %+v, want fired %v", c.p50, v, c.want)
		}
	}
}
