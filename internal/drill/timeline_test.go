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
	ta.ack(1, at(-1), at(-0.5), server{port: 1}) // before the fault: not counted
	ta.fault(at(0))
	for i, s := range []float64{0.01, 0.02, 2.52, 2.53, 3.0} {
		ta.ack(int64(i+2), at(s-0.01), at(s), server{port: 1})
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
	ta.ack(1, now.Add(-time.Millisecond), now, server{port: 1})
	ta.read(now.Add(-time.Millisecond), now)
	if tl := ta.tl.section(); len(tl.Writes) != 0 || len(tl.Reads) != 0 {
		t.Fatalf("a timeline without a start kept %d writes and %d reads intervals", len(tl.Writes), len(tl.Reads))
	}
}

// The fault moves back to the start of the run of intervals before it whose writes fell
// below half the load's median before that run (its first second left out); a dip that recovered before the
// fault, too little load, or no fall leave it where it was seen.
func TestDegradedFrom(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return start.Add(time.Duration(i) * interval) }
	steady := func(n int) []int64 {
		s := make([]int64, n)
		for i := range s {
			s[i] = 40
		}
		return s
	}
	for _, c := range []struct {
		name   string
		writes []int64
		fault  int
		from   int
		n      int
		ok     bool
		dips   int
	}{
		{"fell for 1.4 s", append(steady(30), 5, 2, 7, 3, 6, 4, 2, 5, 7, 3, 2, 6, 4, 3, 0, 0), 44, 30, 14, true, 0},
		{"no fall", append(steady(30), 0, 0), 30, 30, 0, true, 0},
		// Writes blocked outright: nothing acknowledged, so nothing counted, after 3 s.
		{"blocked, none acknowledged since", steady(30), 45, 30, 15, true, 0},
		{"a dip that recovered", append(append(steady(20), 0, 0, 0), steady(10)...), 33, 33, 0, true, 3},
		{"too little load", append(steady(12), 0, 0), 14, 14, 0, false, 0},
		// Blocked for longer (1.8 s) than the load had been steady (1.2 s after its first
		// second, on a machine whose sessions logged in late): the level is the load's before
		// the run, not the median over both, which the blocked intervals would make 0.
		{"blocked longer than steady", steady(22), 40, 22, 18, true, 0},
		// A busy machine: the steady load dipped below half for two intervals in a row once,
		// so a fault just after such a dip may have begun up to three intervals later.
		{"steady load with dips", append(append(append(steady(15), 10, 40, 5, 8), steady(10)...), 3, 0, 0), 31, 29, 2, true, 2},
	} {
		tl := &timeline{start: start, writes: c.writes}
		d := tl.degradedFrom(at(c.fault).Add(interval / 2))
		from, n, ok := d.from, d.n, d.ok
		want := at(c.from)
		if c.n == 0 {
			want = at(c.fault).Add(interval / 2)
		}
		if d.dips != c.dips {
			t.Errorf("%s: the steady load's longest dip %d intervals, want %d", c.name, d.dips, c.dips)
		}
		if w := d.within(); w < time.Duration(c.dips+1)*interval || (c.dips == 0 && d.low == 0 && w != interval) {
			t.Errorf("%s: within %v of a steady load with %d dips in %d intervals, longest %d", c.name, w, d.low, d.of, c.dips)
		}
		if !from.Equal(want) || n != c.n || ok != c.ok {
			t.Errorf("%s: from %v, %d intervals, ok %v; want %v, %d, %v", c.name, from.Sub(start), n, ok, want.Sub(start), c.n, c.ok)
		}
	}
}

// One interval in ten dipped below half (single dips, as the race detector's pauses make
// them at a CI load of 27): a run of two dips just before the fault comes by chance about one
// time in a hundred, so the fault's start is stated to within three intervals, not two.
func TestFaultStartPrecisionCoversChanceDips(t *testing.T) {
	start := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	var writes []int64
	for i := range 40 {
		w := int64(60)
		if i%10 == 5 {
			w = 20
		}
		writes = append(writes, w)
	}
	tl := &timeline{start: start, writes: append(writes, 19, 11, 8, 0)}
	d := tl.degradedFrom(start.Add(43*interval + interval/2))
	if d.dips != 1 || d.low != 3 || d.within() != 3*interval {
		t.Fatalf("dips %d, %d of %d intervals low: within %v; want 3 low, within %v", d.dips, d.low, d.of, d.within(), 3*interval)
	}
}

// A fault seen late (observe confirms an unanswered question up to stateWait after asking
// it) is timed from before it was seen: the writes acknowledged and the reads done since
// count after it, those before it (or older than recentSpan) do not.
func TestFaultTimedBeforeItWasSeen(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	ta := newTally(at(-30))
	nw := server{port: 5432, started: at(-100)}
	old := server{port: 5432, started: at(-200)} // another host, the same port
	ta.ack(1, at(-25.1), at(-25), nw)
	ta.ack(2, at(-0.6), at(-0.5), old)
	ta.ack(3, at(0.9), at(1), old) // the old primary, while it was only late
	ta.read(at(0.2), at(0.3))
	ta.ack(4, at(1.9), at(2), nw)
	ta.read(at(-0.2), at(0.1)) // began before the fault
	ta.fault(at(0))            // seen at 2.5 s, timed from 0
	ta.primaryIs(nw)
	if len(ta.acks) != 2 || ta.acks[0].at != at(1) || ta.acks[1].at != at(2) {
		t.Fatalf("acks after the fault %+v, want those at 1 s and 2 s", ta.acks)
	}
	if !ta.firstR.Equal(at(0.3)) || !ta.firstW.Equal(at(2)) {
		t.Fatalf("reads back at %v, writes back at %v; want 0.3 s and 2 s (the old primary's write at 1 s is not the new one's)", ta.firstR, ta.firstW)
	}
	if !(server{port: 1}).is(server{port: 1, started: at(0)}) || old.is(nw) {
		t.Fatal("a server not known by its start is told by its port; two known starts must agree")
	}
}
