package runner

import (
	"context"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/workload"
)

// BenchmarkVULoop is the runner's own cost per operation: one VU whose operation does
// nothing, b.N iterations in one measured step (ns/op is the loop, the clock reads and the
// recording; a real operation's round trip is tens of microseconds).
func BenchmarkVULoop(b *testing.B) {
	l := &fakeLoad{do: func(context.Context, workload.VU, *workload.Op) error { return nil }}
	b.ReportAllocs()
	b.ResetTimer()
	_, err := Run(context.Background(), Config{
		Workload: l, Plan: Sweep{}.Plan(), Tick: time.Second,
		Spec: func(Point) StepSpec { return StepSpec{VUs: 1, Iterations: int64(b.N)} },
	})
	if err != nil {
		b.Fatal(err)
	}
}
