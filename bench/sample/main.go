// Command sample measures what agbench's samplers cost and how well the OS sampler sees the
// device. First, pgbench -S (select-only, 2 clients) on a throwaway primary and standby,
// runs without and with the database sampler (10 Hz waits, 1 s statistics, both nodes) and
// the OS sampler, interleaved: the median TPS of each side, their ratio, and the samplers'
// own CPU. Then the OS sampler's count of device IOs and its utilisation against fio's own
// "Disk stats" for the same jobs. `make bench-sample` runs it; it is a benchmark, not a test.
//
// Imports from agbench: only bench/harness, internal/result, internal/sample, internal/stats.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/agbench/agbench/bench/harness"
)

func main() {
	runs := flag.Int("runs", 6, "pgbench runs per side (with and without the samplers)")
	secs := flag.Int("secs", 5, "seconds per pgbench run")
	scale := flag.Int("scale", 5, "pgbench scale")
	fioRuns := flag.Int("fio-runs", 3, "fio jobs to compare the OS sampler with (0: none)")
	fioSecs := flag.Int("fio-secs", 5, "seconds per fio job")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	harness.Header(os.Stdout, "agbench's samplers: their cost under pgbench -S, and the OS sampler against fio's disk stats")
	err := overhead(ctx, *runs, *secs, *scale)
	if err == nil && *fioRuns > 0 {
		err = diskstatsVsFio(ctx, *fioRuns, *fioSecs)
	}
	harness.Footer(os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench sample:", err)
		os.Exit(1)
	}
}
