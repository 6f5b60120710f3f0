package measure

import (
	"math"
	"sync"
	"testing"
	"time"
)

// Handles recorded concurrently and merged on ticks give exactly the histogram of all
// values recorded into one.
func TestTicksMergeExactly(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := NewRegistry(t0)
	const vus, per = 8, 2000
	want := NewHistogram()
	wantErr := NewHistogram()
	var wg sync.WaitGroup
	handles := make([]*Handle, vus)
	for v := range handles {
		handles[v] = r.NewHandle()
	}
	for v := 0; v < vus; v++ {
		for i := 0; i < per; i++ {
			us := int64((v*per+i)*7919%500000 + 1)
			if i%10 == 0 {
				wantErr.RecordValue(us)
			} else {
				want.RecordValue(us)
			}
		}
	}
	for v := 0; v < vus; v++ {
		wg.Add(1)
		go func(v int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				us := int64((v*per+i)*7919%500000 + 1)
				handles[v].Record(Sample{Op: "q", Latency: time.Duration(us) * time.Microsecond, Err: i%10 == 0, Rows: 2, Bytes: 10})
			}
		}(v)
	}
	done := make(chan struct{})
	ticks := 0
	go func() {
		defer close(done)
		for i := 1; i <= 50; i++ {
			r.Tick(t0.Add(time.Duration(i) * time.Millisecond))
			ticks++
		}
	}()
	wg.Wait()
	<-done
	last := r.Freeze(t0.Add(time.Second))
	q := last.Total["q"]
	if !q.Success.Equals(want) || !q.Error.Equals(wantErr) {
		t.Fatalf("merged success %d / error %d, want %d / %d", q.Count(), q.Errors(), want.TotalCount(), wantErr.TotalCount())
	}
	if q.Rows != 2*vus*per || q.Bytes != 10*vus*per {
		t.Fatalf("rows %d bytes %d", q.Rows, q.Bytes)
	}
	// The throughput series adds up to every operation.
	tp := r.Throughput()
	var sum float64
	prev := t0
	for i, sec := range tp[AllOps].T {
		at := t0.Add(time.Duration(sec * float64(time.Second)))
		sum += tp[AllOps].V[i] * at.Sub(prev).Seconds()
		prev = at
	}
	if int64(sum+0.5) != vus*per {
		t.Fatalf("throughput series sums to %v, want %d", sum, vus*per)
	}
	// The error series has the same points and adds up to the failed operations.
	es := r.ErrorThroughput()[AllOps]
	if len(es.T) != len(tp[AllOps].T) {
		t.Fatalf("error series has %d points, throughput %d", len(es.T), len(tp[AllOps].T))
	}
	sum, prev = 0, t0
	for i, sec := range es.T {
		at := t0.Add(time.Duration(sec * float64(time.Second)))
		sum += es.V[i] * at.Sub(prev).Seconds()
		prev = at
	}
	if int64(sum+0.5) != wantErr.TotalCount() {
		t.Fatalf("error series sums to %v, want %d", sum, wantErr.TotalCount())
	}
	ops, err := r.Ops()
	if err != nil || ops["q"].Count != want.TotalCount() || ops["q"].ErrorLatency == nil || ops["q"].Latency.P99 == 0 {
		t.Fatalf("Ops: %v %+v", err, ops["q"])
	}
}

func TestResetAndFreezeBoundTheWindow(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := NewRegistry(t0)
	h := r.NewHandle()
	h.Record(Sample{Op: "warmup", Latency: time.Millisecond})
	r.Tick(t0.Add(time.Second))
	r.Reset(t0.Add(2 * time.Second))
	if !h.Record(Sample{Op: "q", Latency: 2 * time.Millisecond}) {
		t.Fatal("an operation of the window said not recorded")
	}
	r.Freeze(t0.Add(3 * time.Second))
	// The runner counts an operation as the window's (its node's operations, the VU's
	// iterations) only when the registry took it.
	if h.Record(Sample{Op: "q", Latency: 3 * time.Millisecond}) {
		t.Fatal("an operation after Freeze said recorded")
	}
	late := r.NewHandle()
	if late.Record(Sample{Op: "q", Latency: 3 * time.Millisecond}) {
		t.Fatal("an operation of a handle made after Freeze said recorded")
	}
	tk := r.Tick(t0.Add(4 * time.Second))
	if _, ok := tk.Total["warmup"]; ok {
		t.Fatal("ramp-up operation counted after Reset")
	}
	if n := tk.Total["q"].Count(); n != 1 {
		t.Fatalf("counted %d operations, want 1 (those after Freeze dropped)", n)
	}
	if got := tk.Total["q"].Success.Max(); got < 1990 || got > 2010 {
		t.Fatalf("max %d us, want ~2000", got)
	}
}

func TestClipsHugeLatencies(t *testing.T) {
	r := NewRegistry(time.Unix(0, 0))
	h := r.NewHandle()
	h.Record(Sample{Op: "q", Latency: 3 * time.Hour})
	h.Record(Sample{Op: "q", Latency: 0})
	q := r.Tick(time.Unix(1, 0)).Total["q"]
	if q.Count() != 2 || q.Clipped != 1 || q.Success.Min() != MinLatencyMicros {
		t.Fatalf("count %d clipped %d min %d", q.Count(), q.Clipped, q.Success.Min())
	}
}

// The window's last sliver (the few milliseconds between the last tick and the close, in
// which operations still running are not counted) is folded into the point before it,
// not left as a point of its own that reads as a collapse of throughput.
func TestFreezeFoldsAShortLastInterval(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, c := range []struct {
		last            time.Duration
		points          int
		lastRate, lastT float64
	}{
		{6 * time.Millisecond, 2, 100 / 1.006, 2.006},      // folded: 100 ops over 1.006 s
		{700 * time.Millisecond, 3, 0, 2.7},                // a point of its own
		{400 * time.Millisecond, 2, (100 + 20) / 1.4, 2.4}, // folded, with 20 ops in it
	} {
		r := NewRegistry(t0)
		h := r.NewHandle()
		for i := 0; i < 100; i++ {
			h.Record(Sample{Op: "q", Latency: time.Millisecond})
		}
		r.Tick(t0.Add(time.Second))
		for i := 0; i < 100; i++ {
			h.Record(Sample{Op: "q", Latency: time.Millisecond})
		}
		r.Tick(t0.Add(2 * time.Second))
		if c.lastRate != 0 {
			for i := 0; i < 20 && c.last == 400*time.Millisecond; i++ {
				h.Record(Sample{Op: "q", Latency: time.Millisecond})
			}
		}
		tk := r.Freeze(t0.Add(2*time.Second + c.last))
		for _, name := range []string{"q", AllOps} {
			s := r.Throughput()[name]
			if len(s.V) != c.points {
				t.Fatalf("last interval %v, %s: %d points %v, want %d", c.last, name, len(s.V), s.V, c.points)
			}
			k := len(s.V) - 1
			if math.Abs(s.V[k]-c.lastRate) > 1e-6 || math.Abs(s.T[k]-c.lastT) > 1e-6 {
				t.Fatalf("last interval %v, %s: last point %.3f at %.3f s, want %.3f at %.3f s", c.last, name, s.V[k], s.T[k], c.lastRate, c.lastT)
			}
		}
		if n := tk.Total["q"].Count(); n != 200+int64(map[bool]int{true: 20}[c.last == 400*time.Millisecond]) {
			t.Fatalf("last interval %v: total %d", c.last, n)
		}
	}
}

// A window that ends before its first tick, after a ramp-up that had ticks, still gets its
// one point (the ramp-up's interval does not count as the window's last).
func TestFreezeAfterResetBeforeAnyTick(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := NewRegistry(t0)
	h := r.NewHandle()
	h.Record(Sample{Op: "warmup", Latency: time.Millisecond})
	r.Tick(t0.Add(time.Second))
	r.Reset(t0.Add(time.Second))
	for i := 0; i < 40; i++ {
		h.Record(Sample{Op: "q", Latency: time.Millisecond})
	}
	r.Freeze(t0.Add(1400 * time.Millisecond))
	for _, name := range []string{"q", AllOps} {
		s := r.Throughput()[name]
		if len(s.V) != 1 || math.Abs(s.V[0]-100) > 1e-6 {
			t.Fatalf("%s: points %v, want one of 100/s", name, s.V)
		}
	}
}
