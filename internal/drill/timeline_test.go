package drill

import (
	"testing"
	"time"
)

// The longest stretch without an acknowledged write is measured from the fault, ends at the
// acknowledgment that ended it, and is absent when writes were not back by the end.
func TestWritesBlocked(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	ta := newTally(at(-5))
	ta.ack(1, at(-1), at(-0.5), 1) // before the fault: not counted
	ta.fault(at(0))
	for i, s := range []float64{0.01, 0.02, 2.52, 2.53, 3.0} {
		ta.ack(int64(i+2), at(s-0.01), at(s), 1)
	}
	got, back := ta.writesBlocked(at(3.1))
	if got == nil || *got != 2.5 || !back.Equal(at(2.52)) {
		t.Fatalf("blocked %v until %v; want 2.5 s until 2.52", got, back)
	}
	if got, _ := ta.writesBlocked(at(6)); got != nil {
		t.Fatalf("no write after 3.0 until 6: blocked %v, want absent (not back)", *got)
	}
	tl := ta.tl.section()
	if tl.Writes[45] != 1 || tl.Writes[50] != 2 || tl.Writes[75] != 2 || tl.Writes[80] != 1 || len(tl.Reads) != len(tl.Writes) {
		t.Fatalf("per 100 ms from -5 s: %v", tl.Writes)
	}
	none := newTally(t0)
	none.fault(at(0))
	if got, _ := none.writesBlocked(at(1)); got != nil {
		t.Fatalf("no acknowledgment after the fault: %v", *got)
	}
}

// A tally without a start (not made by newTally) keeps no timeline: counted from the zero
// time, one acknowledgment would have asked for an interval of every 100 ms since year 1
// (an observe drill did, and its test binary was killed for want of memory).
func TestTimelineWithoutStartKeepsNothing(t *testing.T) {
	var ta tally
	now := time.Now()
	ta.ack(1, now.Add(-time.Millisecond), now, 1)
	ta.read(now.Add(-time.Millisecond), now)
	if tl := ta.tl.section(); len(tl.Writes) != 0 || len(tl.Reads) != 0 {
		t.Fatalf("a timeline without a start kept %d writes and %d reads intervals", len(tl.Writes), len(tl.Reads))
	}
}
