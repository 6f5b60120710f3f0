package result

import (
	"testing"
	"time"
)

// A fixed-rate step's done rate is its started operations (successes and failures) over
// its window; repeats are pooled (all started over all windows); a closed-loop step or one
// without a window has none.
func TestDoneRate(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	step := func(rate float64, sec int, ok, failed int64) *Step {
		return &Step{Rate: rate, Window: Window{Start: t0, End: t0.Add(time.Duration(sec) * time.Second)},
			Ops: map[string]*Op{"q": {Count: ok, Errors: failed}, "nil": nil}}
	}
	if r, ok := DoneRate(step(100, 2, 150, 10)); !ok || r != 80 {
		t.Errorf("one step: %v %v", r, ok)
	}
	if r, ok := DoneRate(step(100, 1, 100, 0), step(100, 3, 140, 0)); !ok || r != 60 {
		t.Errorf("repeats pooled: %v %v, want 240 over 4 s", r, ok)
	}
	if _, ok := DoneRate(step(0, 2, 150, 0)); ok {
		t.Error("closed-loop step has a done rate")
	}
	if _, ok := DoneRate(step(100, 0, 150, 0)); ok {
		t.Error("step without a window has a done rate")
	}
}
