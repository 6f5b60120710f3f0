package experiment

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/segment"
)

// TestBarrierStartsSegmentsTogether runs three segments' barriers against one server as its
// ordinary login: all agree on one start, none begins before it or before the last has
// arrived, and a step one segment never reaches fails the others' wait, naming it. How
// close together they began is not asserted: on a loaded machine a segment's process can
// be scheduled hundreds of milliseconds late (221 ms was seen beside a second CI run), and
// the run says how far apart its segments began ("began within … ms of each other").
func TestBarrierStartsSegmentsTogether(t *testing.T) {
	t.Parallel()
	topo := clustertest.Shared(t, clustertest.Options{})
	cs := clustertest.OrdinaryConnString(topo, topo.Primary())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const of = 3
	run := "test-" + t.Name() + time.Now().Format("150405.000000")
	bs := make([]*barrier, of)
	for i := range bs {
		b, err := openBarrier(ctx, cs, segment.Segment{Index: i, Of: of}, run, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer b.close()
		bs[i] = b
	}
	starts := make([]result.SegmentStart, of)
	errs := make([]error, of)
	called, returned := make([]time.Time, of), make([]time.Time, of)
	var wg sync.WaitGroup
	for i, b := range bs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The segments arrive apart, as pods scheduled one after the other do.
			time.Sleep(time.Duration(i) * 300 * time.Millisecond)
			called[i] = time.Now()
			starts[i], errs[i] = b.wait(ctx, 0)
			returned[i] = time.Now()
		}()
	}
	wg.Wait()
	lastCalled := slices.MaxFunc(called, time.Time.Compare)
	first, last := starts[0].Began, starts[0].Began
	for i, st := range starts {
		if errs[i] != nil {
			t.Fatalf("segment %d: %v", i, errs[i])
		}
		if !st.At.Equal(starts[0].At) {
			t.Fatalf("segments agreed on different starts: %v", starts)
		}
		// The early ones waited for the last: no segment began before every one had come.
		if !returned[i].After(lastCalled) {
			t.Fatalf("segment %d began %v before the last segment arrived", i, lastCalled.Sub(returned[i]))
		}
		// Each began at the agreed start, not before it (by the database's clock as the
		// segment read it; a timer never fires early: the millisecond is for the wall
		// clock's slewing while it waited).
		if st.Began.Before(st.At.Add(-time.Millisecond)) {
			t.Fatalf("segment %d began %v before the agreed start (starts %+v)", i, st.At.Sub(st.Began), starts)
		}
		first, last = minTime(first, st.Began), maxTime(last, st.Began)
	}
	t.Logf("three segments began within %v of each other", last.Sub(first))

	bs[0].timeout, bs[1].timeout = time.Second, time.Second
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[i] = bs[i].wait(ctx, 1) }()
	}
	wg.Wait()
	for i := 0; i < 2; i++ {
		if errs[i] == nil || !strings.Contains(errs[i].Error(), "segment(s) 2 of 3 did not arrive") || !strings.Contains(errs[i].Error(), "arrived: 0, 1") {
			t.Fatalf("segment %d without segment 2: %v", i, errs[i])
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
