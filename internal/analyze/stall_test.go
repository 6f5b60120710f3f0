package analyze

import (
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// A stretch of ticks without a completed operation is a stall when the step's rate would
// have completed many in it, and not when it completes few a second anyway (long scans,
// TPC-C's think times); one that lasts to the window's end is said to.
func TestStalled(t *testing.T) {
	t0 := time.Now()
	step := func(v ...float64) result.Step {
		ts := result.TimeSeries{Start: t0}
		var n int64
		for i, x := range v {
			ts.T, ts.V = append(ts.T, float64(i+1)), append(ts.V, x)
			n += int64(x)
		}
		return result.Step{VUs: 2, Window: result.Window{Start: t0, End: t0.Add(time.Duration(len(v)) * time.Second)},
			Ops: map[string]*result.Op{"q": {Count: n}}, Throughput: map[string]result.TimeSeries{"*": ts}}
	}
	for _, c := range []struct {
		st                 result.Step
		sec, from, endFrom float64
	}{
		{step(500, 480, 0, 0, 0, 490, 510, 500), 3, 2, -1},
		{step(500, 480, 0, 0, 0, 490, 0, 0), 3, 2, 6},
		{step(500, 480, 490, 0, 0), 2, 3, 3},
		{step(2, 3, 0, 0, 0, 2, 3, 2), 0, 0, -1}, // 1.5 ops/s: 4.5 in the stretch, no stall
		{step(500, 0, 480), 0, 0, -1},            // 1 s is no stall
	} {
		sec, from, endFrom := Stall(c.st)
		if sec != c.sec || from != c.from || endFrom != c.endFrom {
			t.Errorf("%v: stall %v s from %v (to the end from %v), want %v from %v (%v)", c.st.Throughput["*"].V, sec, from, endFrom, c.sec, c.from, c.endFrom)
		}
	}
	// Ticks as a timer fires them, each late by microseconds: the two empty ticks after a
	// 3 s SIGSTOP of the primary spanned 1.999997 s, and are a stall.
	jitter := step(11363, 10088, 13508, 12741, 116, 0, 0, 15748, 12650)
	ts := jitter.Throughput["*"]
	ts.T = []float64{1.000033512, 2.000032965, 3.000032161, 4.000033615, 5.000036819, 6.000033864, 7.000034222, 8.000033341, 9.000034816}
	jitter.Throughput["*"] = ts
	if sec, from, _ := Stall(jitter); sec < 1.99 || from < 5 || from > 5.001 {
		t.Errorf("two empty ticks spanning 1.999997 s: stall %v s from %v, want ~2 s from ~5", sec, from)
	}
	v := stalled([]Step{{Load: 2, Throughput: 300, StallSec: 3, StallFrom: 2}}, "threads")
	if v == nil || !strings.Contains(v.Message, "from 2.0 s to 5.0 s") || !strings.Contains(v.Message, "would have completed 900") {
		t.Errorf("verdict %+v", v)
	}
}
