package runner

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/workload"
)

// stuckOnce is a load whose VU 1 waits for block in its third operation (ctx's end when
// block is 0) while the other VUs go on; stuckAt, when not nil, is set to when that
// operation was called (unix ns, the clock the runner notes operations in progress by).
func stuckOnce(block time.Duration, stuckAt *atomic.Int64) *fakeLoad {
	var calls atomic.Int64
	return &fakeLoad{do: func(ctx context.Context, vu workload.VU, op *workload.Op) error {
		if vu.ID == 1 && calls.Add(1) == 3 { // only VU 1 counts
			if stuckAt != nil {
				stuckAt.Store(time.Now().UnixNano())
			}
			if block == 0 {
				<-ctx.Done()
				return ctx.Err()
			}
			sleep(ctx, block)
			return nil
		}
		sleep(ctx, time.Millisecond)
		return nil
	}}
}

func stretchesOf(st result.Step, vu int) []result.VUQuiet {
	var out []result.VUQuiet
	for _, q := range st.VUQuiet {
		if q.VU == vu {
			out = append(out, q)
		}
	}
	return out
}

// One VU that waits 1.2 s while the other goes on has a stretch of at least that long,
// named by where its session was.
func TestAStuckVUHasAQuietStretch(t *testing.T) {
	st, err := runOne(t, context.Background(), stuckOnce(1200*time.Millisecond, nil), StepSpec{VUs: 2, Duration: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if st.VUQuietMinSeconds != QuietMin.Seconds() {
		t.Fatalf("watched for %v s, want %v", st.VUQuietMinSeconds, QuietMin.Seconds())
	}
	qs := stretchesOf(st, 1)
	if len(qs) == 0 {
		t.Fatalf("VU 1 has no quiet stretch: %+v", st.VUQuiet)
	}
	q := qs[0]
	if q.To-q.From < 1.2 || q.From < 0 || q.To > st.Window.Seconds() || q.Node != "node2" || q.Reconnected {
		t.Fatalf("stretch %+v in a window of %.2f s: want 1.2 s or more, inside it, on node2", q, st.Window.Seconds())
	}
}

// A VU still waiting when the window closes has a stretch to the end (and is in flight).
func TestAVUStuckToTheEnd(t *testing.T) {
	var stuckAt atomic.Int64
	st, err := runOne(t, context.Background(), stuckOnce(0, &stuckAt), StepSpec{VUs: 2, Duration: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	qs := stretchesOf(st, 1)
	if len(qs) != 1 || !qs[0].ToEnd || qs[0].To != st.Window.Seconds() {
		t.Fatalf("VU 1's stretches %+v (window %.2f s, in flight %d): want one to the end", qs, st.Window.Seconds(), st.InFlight)
	}
	// The operation in flight began after VU 1's last one completed and no later than it
	// was called: its age lies between the time since the call and the stretch (it had
	// to be within 50 ms of the stretch, which one preemption between two operations of a
	// VU on a busy machine exceeds). 1 ms allows for the wall clock's slew against the
	// monotonic one the stretch is measured by.
	sinceCall := st.Window.End.Sub(time.Unix(0, stuckAt.Load())).Seconds()
	if st.InFlight < 1 || st.InFlightOldestSeconds < sinceCall-1e-3 || st.InFlightOldestSeconds > qs[0].To-qs[0].From+1e-3 {
		t.Fatalf("in flight %d, the oldest for %v s: want VU 1's, from %v s (since its call) to %v s (the stretch)",
			st.InFlight, st.InFlightOldestSeconds, sinceCall, qs[0].To-qs[0].From)
	}
}

// A VU that finished its iterations is not quiet while the others still run.
func TestAVUDoneWithItsIterationsIsNotQuiet(t *testing.T) {
	l := &fakeLoad{do: func(ctx context.Context, vu workload.VU, op *workload.Op) error {
		if vu.ID == 1 {
			sleep(ctx, 400*time.Millisecond)
		}
		return nil
	}}
	st, err := runOne(t, context.Background(), l, StepSpec{VUs: 2, Iterations: 3})
	if err != nil {
		t.Fatal(err)
	}
	if st.Window.Seconds() < 1.2 {
		t.Fatalf("window %.2f s, want 1.2 s or more", st.Window.Seconds())
	}
	if qs := stretchesOf(st, 0); len(qs) > 0 {
		t.Fatalf("VU 0 ended at once but has stretches %+v", qs)
	}
}

// A VU keeps its longest stretches, maxQuietPerVU of them.
func TestQuietKeepsTheLongest(t *testing.T) {
	var q quietWatch
	for i := range maxQuietPerVU + 3 {
		q.add(result.VUQuiet{From: float64(10 * i), To: float64(10*i + 1 + i%5)})
	}
	if len(q.stretches) != maxQuietPerVU {
		t.Fatalf("%d stretches kept", len(q.stretches))
	}
	short := 0
	for _, s := range q.stretches {
		if s.To-s.From == 1 {
			short++
		}
	}
	if short != 1 { // four of 1 s (i = 0, 5, 10, 15), three dropped
		t.Fatalf("%d stretches of 1 s kept, want 1 (the longest kept): %+v", short, q.stretches)
	}
}
