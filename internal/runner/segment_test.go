package runner

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/segment"
	"github.com/agbench/agbench/internal/workload"
)

// TestSegmentsSplitTheStep runs the three segments of one step and checks that together
// they ran the whole step once: every VU of the step in exactly one segment, with the
// seed it has in the whole run, and every operation of the whole run's iterations.
func TestSegmentsSplitTheStep(t *testing.T) {
	t.Parallel()
	const vus, iters, of = 7, 5, 3
	whole := map[int]int64{}
	for _, w := range mustWorkers(t, Config{}, vus) {
		whole[w.ID] = w.Seed
	}
	var mu sync.Mutex
	seen := map[int]int{}
	var ops, barriers int64
	for i := 0; i < of; i++ {
		seg := segment.Segment{Index: i, Of: of}
		l := &fakeLoad{do: func(_ context.Context, vu workload.VU, _ *workload.Op) error {
			mu.Lock()
			defer mu.Unlock()
			if vu.Segment != seg || vu.Of != vus || whole[vu.ID] != vu.Seed {
				t.Errorf("segment %v ran VU %+v", seg, vu)
			}
			seen[vu.ID] = i
			return nil
		}}
		steps, err := Run(context.Background(), Config{Workload: l, Plan: Sweep{}.Plan(), Segment: seg,
			Spec:    func(Point) StepSpec { return StepSpec{VUs: vus, Iterations: iters} },
			Barrier: func(context.Context, Point) error { barriers++; return nil }})
		if err != nil || len(steps) != 1 {
			t.Fatalf("segment %v: %v", seg, err)
		}
		if st := steps[0]; st.VUs != seg.Count(vus) || st.Totals().Count != int64(seg.Count(vus))*iters {
			t.Fatalf("segment %v: %d VUs, %d operations", seg, st.VUs, st.Totals().Count)
		}
		ops += steps[0].Totals().Count
	}
	if len(seen) != vus || ops != vus*iters || barriers != of {
		t.Fatalf("VUs run %v, operations %d of %d, barriers %d", seen, ops, vus*iters, barriers)
	}
}

// TestSegmentsTakeTurnsOfTheRate checks that the segments of a fixed-rate step start the
// whole run's scheduled operations between them, each once.
func TestSegmentsTakeTurnsOfTheRate(t *testing.T) {
	t.Parallel()
	const of, total = 3, 12
	offsets := map[time.Duration]int{}
	for i := 0; i < of; i++ {
		seg := segment.Segment{Index: i, Of: of}
		ex := newExecution(Config{Segment: seg}, Point{}, StepSpec{VUs: of, Iterations: total / of, Rate: 1000}, nil)
		jobs := make(chan time.Time)
		start := time.Now()
		go ex.schedule(context.Background(), start, jobs)
		n := 0
		for at := range jobs {
			offsets[at.Sub(start)]++
			n++
		}
		if n != total/of {
			t.Fatalf("segment %v started %d operations, want %d", seg, n, total/of)
		}
	}
	for k := 0; k < total; k++ {
		if at := time.Duration(k) * time.Millisecond; offsets[at] != 1 {
			t.Fatalf("operation at %v started %d times (%v)", at, offsets[at], offsets)
		}
	}
}

func TestSegmentWithoutVUsFails(t *testing.T) {
	t.Parallel()
	l := &fakeLoad{do: func(context.Context, workload.VU, *workload.Op) error { return nil }}
	_, err := Run(context.Background(), Config{Workload: l, Plan: Sweep{}.Plan(), Segment: segment.Segment{Index: 0, Of: 3},
		Spec: func(Point) StepSpec { return StepSpec{VUs: 2, Iterations: 1} }})
	if err == nil || l.made.Load() != 0 {
		t.Fatalf("segment 0/3 of 2 VUs: %v, %d workers made", err, l.made.Load())
	}
}

// mustWorkers makes the VUs of a step of n VUs with cfg's segment and returns them.
func mustWorkers(t *testing.T, cfg Config, n int) []workload.VU {
	t.Helper()
	l := &fakeLoad{}
	cfg.Workload = l
	first, last := cfg.Segment.Range(n)
	ws, err := makeWorkers(context.Background(), cfg, Point{}, first, last-first, n)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]workload.VU, len(ws))
	for i, w := range ws {
		out[i] = w.(*fakeWorker).vu
	}
	return out
}
