package hostmetrics_test

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/hostmetrics"
	"github.com/agbench/agbench/internal/hostmetrics/hostmetricstest"
)

// cpuSeconds is this process's user and system CPU so far.
func cpuSeconds(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// benchReads reads every source at once, b.N times, as the remote-host sampler does each
// second, and reports agbench's own CPU per round: at one round a second, the share of a
// core that reading these hosts costs (the exporters' and the server's CPU are theirs).
func benchReads(b *testing.B, srcs []hostmetrics.Source) {
	ctx := context.Background()
	b.ResetTimer()
	cpu0, t0 := cpuSeconds(b), time.Now()
	for i := 0; i < b.N; i++ {
		var wg sync.WaitGroup
		for _, s := range srcs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := s.Read(ctx)
				if err == nil {
					_ = hostmetrics.Between("n", r, r)
				} else {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
	}
	cpu := cpuSeconds(b) - cpu0
	b.ReportMetric(cpu/float64(b.N)*1e3, "cpu-ms/round")
	b.ReportMetric(cpu/float64(b.N)*100, "%core@1Hz")
	b.ReportMetric(time.Since(t0).Seconds()/float64(b.N)*1e3, "wall-ms/round")
}

// BenchmarkScrapeCost: what reading one and three node_exporters directly, and one through
// a Prometheus server, costs agbench each second (make bench-hostmetrics).
func BenchmarkScrapeCost(b *testing.B) {
	var exporters []*hostmetricstest.Process
	var direct []hostmetrics.Source
	for range 3 {
		ex := hostmetricstest.StartExporter(b)
		src, err := hostmetrics.NewExporter(ex.URL, nil)
		if err != nil {
			b.Fatal(err)
		}
		exporters, direct = append(exporters, ex), append(direct, src)
	}
	prom := hostmetricstest.StartPrometheus(b, exporters[0].Addr)
	via, err := hostmetrics.NewPrometheus(context.Background(), prom.URL, "", exporters[0].Addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("exporters=1", func(b *testing.B) { benchReads(b, direct[:1]) })
	b.Run("exporters=3", func(b *testing.B) { benchReads(b, direct) })
	b.Run("prometheus=1", func(b *testing.B) { benchReads(b, []hostmetrics.Source{via}) })
}
