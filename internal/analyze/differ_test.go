package analyze

import (
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// stepOfRate is a completed step of ops operations over sec seconds with the given
// per-second throughput (one point per whole second).
func stepOfRate(ops int64, sec float64, perSecond ...float64) *result.Step {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st := &result.Step{Complete: true, Window: result.Window{Start: t0, End: t0.Add(time.Duration(sec * float64(time.Second)))},
		Ops: map[string]*result.Op{"query": {Count: ops}}}
	if len(perSecond) > 0 {
		ts := result.TimeSeries{}
		for i, v := range perSecond {
			ts.T, ts.V = append(ts.T, float64(i+1)), append(ts.V, v)
		}
		st.Throughput = map[string]result.TimeSeries{"*": ts}
	}
	return st
}

func TestDifferOneSamplePerSideIsTooLittle(t *testing.T) {
	// The case: windows of 36 ms and 3 ms, one sample each, "10.31×" claimed.
	a := SideOf("routing=off", []*result.Step{stepOfRate(100, 0.036)}, nil)
	b := SideOf("routing=on", []*result.Step{stepOfRate(30, 0.003)}, nil)
	d := Differ(a, b)
	if d.Outcome != TooLittleData || d.Winner != "" || !strings.Contains(d.Why, "s measured (2 s needed)") {
		t.Errorf("one sample per side: %+v", d)
	}
	v := d.Verdict("throughput at 1 threads")
	if v == nil || v.Code != VTooLittleData || !strings.Contains(v.Message, "too little data to compare") {
		t.Errorf("verdict %+v", v)
	}
	if s := d.Sentence(); strings.Contains(s, "ahead") {
		t.Errorf("sentence %q names a winner", s)
	}
}

func TestDifferTwoSamplesPerSideIsTooLittle(t *testing.T) {
	// Enough operations and time, but two per-second samples a side: no spread.
	a := SideOf("off", []*result.Step{stepOfRate(2000, 2, 1000, 1000)}, nil)
	b := SideOf("on", []*result.Step{stepOfRate(2160, 2, 1080, 1080)}, nil)
	if d := Differ(a, b); d.Outcome != TooLittleData || !strings.Contains(d.Why, "spread is unknown") {
		t.Errorf("two samples per side: %+v", d)
	}
}

func TestDifferLeavesOutFailedAndAbortedSteps(t *testing.T) {
	aborted := stepOfRate(5000, 3, 1700, 1600, 1700)
	aborted.Complete = false
	empty := stepOfRate(0, 3, 0, 0, 0)
	good := stepOfRate(3000, 3, 1000, 1010, 990)
	a := SideOf("off", []*result.Step{aborted, empty}, nil)
	if len(a.Repeats) != 0 || len(a.Excluded) != 2 {
		t.Fatalf("side of an aborted and an empty step: %+v", a)
	}
	d := Differ(a, SideOf("on", []*result.Step{good}, nil))
	if d.Outcome != TooLittleData || !strings.Contains(d.Why, "off: no usable step, 1 incomplete (failed, aborted or cut by a fault) step, 1 empty") {
		t.Errorf("aborted side: %+v", d)
	}
	// 0.14 s of a step: too little measured time, whatever its figures.
	short := stepOfRate(300, 0.14, 2100)
	if d := Differ(SideOf("off", []*result.Step{short}, nil), SideOf("on", []*result.Step{good}, nil)); d.Outcome != TooLittleData {
		t.Errorf("0.14 s step: %+v", d)
	}
}

func TestDifferSpreadFromIntervalsAndRepeats(t *testing.T) {
	off := SideOf("routing=off", []*result.Step{stepOfRate(3000, 3, 1000, 1020, 990)}, nil)
	close := SideOf("routing=on", []*result.Step{stepOfRate(3030, 3, 1015, 1000, 1025)}, nil)
	far := SideOf("routing=on", []*result.Step{stepOfRate(6000, 4, 1500, 1480, 1520, 1500)}, nil)
	off4 := SideOf("routing=off", []*result.Step{stepOfRate(4000, 4, 1000, 1020, 990, 1000)}, nil)
	if d := Differ(off, close); d.Outcome != NoDifference || d.Winner != "" || d.Spread != "per-second throughput" {
		t.Errorf("overlapping: %+v", d)
	}
	if v := Differ(off, close).Verdict("x"); v == nil || v.Code != VNoDifference || !strings.Contains(v.Message, "no difference measured") {
		t.Errorf("overlapping verdict: %+v", v)
	}
	d := Differ(off4, far)
	if d.Outcome != Different || d.Winner != "routing=on" || d.Ratio < 1.45 || d.Ratio > 1.55 || d.Verdict("x") != nil {
		t.Errorf("separated: %+v", d)
	}
	if !strings.Contains(d.Sentence(), "routing=on ahead, 1.") {
		t.Errorf("sentence %q", d.Sentence())
	}
	if d := Differ(far, off4); d.Winner != "routing=on" {
		t.Errorf("order matters: %+v", d)
	}
	// Three repeats a side: the spread is the repeats', not the seconds'.
	reps := func(name string, rates ...float64) Side {
		var st []*result.Step
		for _, r := range rates {
			st = append(st, stepOfRate(int64(r), 1, r))
		}
		return SideOf(name, st, nil)
	}
	d = Differ(reps("a", 1000, 1010, 990, 1005), reps("b", 1200, 1190, 1210, 1200))
	if d.Outcome != Different || d.Winner != "b" || d.Spread != "4 and 4 repeats" {
		t.Errorf("repeats: %+v", d)
	}
	// Three a side, apart: one time in ten that happens by chance alone, so it is no
	// finding, and the message says so; overlapping, it is "no difference measured".
	d = Differ(reps("a", 1000, 1010, 990), reps("b", 1200, 1190, 1210))
	if d.Outcome != TooLittleData || !strings.Contains(d.Why, "the spreads (3 and 3 repeats) are apart, but 3 and 3 samples of one distribution come apart by chance 1 time in 10 (at most 1 in 20 allowed") {
		t.Errorf("3 and 3 repeats apart: %+v", d)
	}
	if d := Differ(reps("a", 1000, 1010, 990), reps("b", 1000, 1190, 1210)); d.Outcome != NoDifference {
		t.Errorf("3 and 3 repeats overlapping: %+v", d)
	}
	// A metric other than ops/s scales the per-second spread by the step's own ratio.
	nopm := func(st *result.Step) (float64, bool) { return 60 * st.OpsPerSecond(), true }
	s := SideOf("a", []*result.Step{stepOfRate(3000, 3, 1000, 1020, 990)}, nopm)
	if len(s.Intervals) != 3 || s.Intervals[0] != 60000 || s.Repeats[0] != 60000 {
		t.Errorf("scaled side: %+v", s)
	}
}

func TestDifferPartialIntervalLeftOut(t *testing.T) {
	st := stepOfRate(3000, 3.2, 1000, 1000, 1000)
	ts := st.Throughput["*"]
	ts.T, ts.V = append(ts.T, 3.2), append(ts.V, 5000) // 0.2 s of a last interval
	st.Throughput["*"] = ts
	if s := SideOf("a", []*result.Step{st}, nil); len(s.Intervals) != 3 {
		t.Errorf("partial interval counted: %+v", s.Intervals)
	}
}

func TestDifferStepsWithoutOperations(t *testing.T) {
	// seed's phases count bytes, not operations: no operation minimum, and one repeat of
	// no per-second series leaves the spread unknown (not "empty" steps).
	seed := func(mbps float64) *result.Step {
		st := stepOfRate(0, 11)
		st.Ops = map[string]*result.Op{}
		st.Counters = map[string]float64{"mb_per_s": mbps}
		return st
	}
	mb := func(st *result.Step) (float64, bool) { v, ok := st.Counters["mb_per_s"]; return v, ok }
	a, b := SideOf("none", []*result.Step{seed(43)}, mb), SideOf("lz4", []*result.Step{seed(78)}, mb)
	if a.OfOps || len(a.Excluded) != 0 || len(a.Repeats) != 1 {
		t.Fatalf("side of a seeding: %+v", a)
	}
	d := Differ(a, b)
	if d.Outcome != TooLittleData || !strings.Contains(d.Why, "spread is unknown") || strings.Contains(d.Why, "operations") {
		t.Errorf("seedings once each: %+v", d)
	}
	d = Differ(SideOf("none", []*result.Step{seed(43), seed(44), seed(42), seed(43)}, mb), SideOf("lz4", []*result.Step{seed(78), seed(80), seed(77), seed(79)}, mb))
	if d.Outcome != Different || d.Winner != "lz4" {
		t.Errorf("seedings four times each: %+v", d)
	}
}

// A loser whose median is 0 gives no ratio: "ahead; the other side's median 0", never +Inf×.
func TestDifferNoRatioOverAZeroMedian(t *testing.T) {
	a := Side{Name: "a", Repeats: []float64{1000, 1010, 990, 1000}, Ops: 9000, Seconds: 9, OfOps: true}
	b := Side{Name: "b", Repeats: []float64{0, 0, 0, 0}, Ops: 9000, Seconds: 9, OfOps: true}
	d := Differ(a, b)
	if d.Outcome != Different || d.Winner != "a" || d.Ratio != 0 {
		t.Fatalf("zero median: %+v", d)
	}
	if s := d.Sentence(); strings.Contains(s, "Inf") || !strings.Contains(s, "the other side's median 0") {
		t.Errorf("sentence %q", s)
	}
}

// A spread's ends of 10,000 and more are grouped whole numbers, never %g's exponent.
func TestSpreadBoundsReadAsNumbers(t *testing.T) {
	for x, want := range map[float64]string{179.44: "179.4", 5438.2: "5438", 25520.4: "25,520", 1234567: "1,234,567"} {
		if got := bound(x); got != want {
			t.Errorf("bound(%v) = %q, want %q", x, got, want)
		}
	}
}

// Two sides asked the same 200/s that both kept it (a busy machine left one 1.5% behind,
// each second a little short, the other caught up) do not differ in throughput: the
// schedule made it, not the variant. A side that fell more than rate-not-kept allows is
// compared by the rule, and so are sides asked different rates.
func TestDifferFixedRateBothKept(t *testing.T) {
	atRate := func(rate float64, ops int64, perSecond ...float64) *result.Step {
		st := stepOfRate(ops, float64(len(perSecond)), perSecond...)
		st.Rate = rate
		return st
	}
	off := SideOf("routing=off", []*result.Step{atRate(200, 593, 198, 196, 197)}, nil)
	on := SideOf("routing=on", []*result.Step{atRate(200, 600, 200, 200, 200)}, nil)
	d := Differ(off, on)
	if d.Outcome != NoDifference || d.Winner != "" || !strings.Contains(d.Why, "both kept the asked 200/s (routing=off did 197.7/s, routing=on 200/s)") {
		t.Fatalf("both kept the rate: %+v", d)
	}
	behind := SideOf("routing=off", []*result.Step{atRate(200, 600, 150, 150, 150, 150)}, nil)
	on4 := SideOf("routing=on", []*result.Step{atRate(200, 800, 200, 200, 200, 200)}, nil)
	off4 := SideOf("routing=off", []*result.Step{atRate(200, 790, 198, 196, 197, 198)}, nil)
	if d := Differ(behind, on4); d.Outcome != Different || d.Winner != "routing=on" {
		t.Errorf("one side 25%% behind its schedule: %+v", d)
	}
	other := SideOf("routing=on", []*result.Step{atRate(220, 880, 220, 220, 220, 220)}, nil)
	if d := Differ(off4, other); d.Outcome != Different || d.Winner != "routing=on" {
		t.Errorf("different rates asked: %+v", d)
	}
	nopm := func(st *result.Step) (float64, bool) { return st.OpsPerSecond() * 60, true }
	if a := SideOf("a", []*result.Step{atRate(200, 593, 198, 196, 197)}, nopm); a.AskedRate != 0 {
		t.Errorf("a metric other than throughput took the asked rate: %v", a.AskedRate)
	}
}

// The chance that samples of one distribution come apart in order is 2 in C(n+m, n):
// three a side one in ten, four a side one in 35.
func TestChanceApart(t *testing.T) {
	for _, c := range []struct {
		n, m   int
		inOne  float64
		enough bool
	}{{3, 3, 10, false}, {3, 4, 17.5, false}, {4, 4, 35, true}, {3, 5, 28, true}, {2, 30, 248, false}, {10, 10, 92378, true}} {
		if got := 1 / chanceApart(c.n, c.m); got < c.inOne-0.01 || got > c.inOne+0.01 || enoughSamples(c.n, c.m) != c.enough {
			t.Errorf("%d and %d: 1 in %.2f (enough %v), want 1 in %v (%v)", c.n, c.m, got, enoughSamples(c.n, c.m), c.inOne, c.enough)
		}
	}
}
