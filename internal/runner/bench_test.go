package runner

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/workload"
)

// BenchmarkVULoop is the runner's own cost per operation: VUs whose operation does nothing,
// b.N iterations in all in one measured step (ns/op is the loop, the clock readings and the
// recording; a real operation's round trip is tens of microseconds). With 4 VUs on 2 cores
// it also shows what the VUs share.
func BenchmarkVULoop(b *testing.B) {
	for _, vus := range []int{1, 4} {
		b.Run(fmt.Sprintf("vus=%d", vus), func(b *testing.B) {
			l := &fakeLoad{do: func(context.Context, workload.VU, *workload.Op) error { return nil }}
			b.ReportAllocs()
			b.ResetTimer()
			_, err := Run(context.Background(), Config{
				Workload: l, Plan: Sweep{}.Plan(), Tick: time.Second,
				Spec: func(Point) StepSpec { return StepSpec{VUs: vus, Iterations: int64(max(b.N/vus, 1))} },
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}
