package stress

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/target"
	"github.com/agbench/agbench/internal/workload"
)

// BenchmarkDo is the per-query path of a virtual user on a real server: a prepared point
// query with a range parameter, as make bench-stress runs it, over the session agbench opens
// (target.Connect, a blocking socket). allocs/op is the driver's allocations per query, which
// should stay 0; cpu-us/op is this process's user+system time per query, kernel included.
func BenchmarkDo(b *testing.B) {
	clustertest.Require(b)
	topo := clustertest.New(b, clustertest.Options{})
	ctx := context.Background()
	cs := topo.ConnString(topo.Primary(), "")
	params, err := ParseRange("1:1000")
	if err != nil {
		b.Fatal(err)
	}
	s := New(Config{
		Queries: []string{`SELECT $1::int + 1`},
		Params:  params,
		Connect: func(ctx context.Context, _ workload.VU) (*pgx.Conn, workload.Landing, error) {
			c, err := target.Connect(ctx, cs, "")
			return c, workload.Landing{}, err
		},
	})
	w, err := s.NewWorker(ctx, workload.VU{Seed: 1, Of: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer w.(workload.Closer).Close()
	// The runner's VUs run under a context that can be cancelled.
	vuCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var op workload.Op
	u0, s0 := cpuTime()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		op = workload.Op{}
		if err := w.Do(vuCtx, &op); err != nil || op.Rows != 1 {
			b.Fatalf("query %d: %d rows, %v", i, op.Rows, err)
		}
	}
	b.StopTimer()
	u1, s1 := cpuTime()
	b.ReportMetric(float64((u1-u0)+(s1-s0))/float64(time.Microsecond)/float64(b.N), "cpu-us/op")
}

func cpuTime() (user, sys time.Duration) {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}
