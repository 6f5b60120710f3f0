// Command terminals measures what TPC-C's emulated terminals cost agbench (tpcc run
// --terminals): on one throwaway server it builds the warehouses once, then runs, interleaved
// over rounds, the specification's shape (ten terminals per warehouse) and a driver-capacity
// run of many more terminals (outside the specification's terminal rule), each over a pool of
// at most -sessions sessions. For each it prints the sessions asked and the most backends of
// the monitor seen in pg_stat_activity, the driver's memory (peak RSS, Go heap, the Go
// runtime's total) against the targets, tpmC per warehouse against its bound, the response
// times' 90th percentiles against clause 5.2.5.4 and the wait for a session, as medians over
// the rounds. `make bench-terminals` runs it; it is a benchmark, not a test.
//
// Imports from agbench: only bench/harness, internal/result, internal/units, internal/workload/tpcc.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/bench/harness"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/units"
	"github.com/agbench/agbench/internal/workload/tpcc"
)

// Targets of the driver's memory (peak resident set).
const (
	specMaxRSS     = 256 * units.MiB // 1,000 terminals over at most 50 sessions
	capacityMaxRSS = 1 * units.GiB   // 10,000 terminals
)

// side is one shape of run.
type side struct {
	name       string
	terminals  int
	thinkScale float64
	maxRSS     int64
}

// sample is one run of one side.
type sample struct {
	backends int // the most monitor sessions seen at once
	ts       *result.TerminalsStep
	step     *result.Step
	cpu      time.Duration
}

type config struct {
	bin                string
	warehouses, rounds int
	sessions, capacity int
	capacityScale      float64
	secs, rampup       int
	buildVUs           int
	keep               bool
}

func main() {
	var c config
	flag.StringVar(&c.bin, "agbench", "bin/agbench", "agbench binary")
	flag.IntVar(&c.warehouses, "warehouses", 100, "warehouses to build (the specification's run has ten terminals per warehouse)")
	flag.IntVar(&c.rounds, "rounds", 3, "rounds (medians are taken over them)")
	flag.IntVar(&c.sessions, "sessions", 50, "the monitor's pool of sessions in every run")
	flag.IntVar(&c.capacity, "capacity", 10000, "terminals of the driver-capacity run")
	flag.Float64Var(&c.capacityScale, "capacity-think-scale", 1, "keying and think times of the driver-capacity run, scaled (below 1: said so)")
	flag.IntVar(&c.secs, "secs", 120, "measured seconds per run")
	flag.IntVar(&c.rampup, "rampup", 30, "ramp-up seconds per run")
	flag.IntVar(&c.buildVUs, "build-vus", 2, "loaders of the build")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c); err != nil {
		fmt.Fprintln(os.Stderr, "bench terminals:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c config) error {
	sides := []side{
		{name: "spec", terminals: result.TerminalsPerWarehouse * c.warehouses, thinkScale: 1, maxRSS: specMaxRSS},
		{name: "capacity", terminals: c.capacity, thinkScale: c.capacityScale, maxRSS: capacityMaxRSS},
	}
	cl, err := harness.StartCluster(ctx, "bench-terminals", 0, []string{"max_connections=" + strconv.Itoa(c.sessions+40)})
	if err != nil {
		return err
	}
	defer cl.Close()
	harness.Header(os.Stdout, fmt.Sprintf("tpcc run --terminals: %d warehouses, at most %d sessions, %d round(s) of %d s (+%d s ramp-up)",
		c.warehouses, c.sessions, c.rounds, c.secs, c.rampup))
	start := time.Now()
	if out, _, err := harness.Run(ctx, cl.Env, c.bin, "tpcc", "build", "--cluster", cl.Topo.Name,
		"--warehouses", strconv.Itoa(c.warehouses), "--build-vus", strconv.Itoa(c.buildVUs)); err != nil {
		return fmt.Errorf("build: %w\n%s", err, out)
	}
	fmt.Printf("built %d warehouses in %v\n\n", c.warehouses, time.Since(start).Round(time.Second))
	watch, err := pgx.Connect(ctx, cl.ConnString(""))
	if err != nil {
		return err
	}
	defer watch.Close(context.Background())
	samples := map[string][]sample{}
	for r := 0; r < c.rounds; r++ {
		for _, sd := range harness.Rotate(sides, r) {
			s, err := runOne(ctx, c, cl, watch, sd, r)
			if err != nil {
				return err
			}
			samples[sd.name] = append(samples[sd.name], s)
			fmt.Printf("round %d %-8s %s\n", r+1, sd.name, line(sd, []sample{s}))
		}
	}
	fmt.Println()
	report(os.Stdout, c, sides, samples)
	harness.Footer(os.Stdout)
	return nil
}

// runOne runs one side once, watching the monitor's backends meanwhile.
func runOne(ctx context.Context, c config, cl *harness.Cluster, watch *pgx.Conn, sd side, round int) (sample, error) {
	dir := filepath.Join(cl.Home, fmt.Sprintf("r%d-%s", round, sd.name))
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	most := make(chan int, 1)
	go func() { most <- watchBackends(runCtx, watch) }()
	out, cpu, err := harness.Run(ctx, cl.Env, c.bin, "tpcc", "run", "--cluster", cl.Topo.Name,
		"--terminals", strconv.Itoa(sd.terminals), "--sessions", strconv.Itoa(min(c.sessions, sd.terminals)),
		"--think-scale", strconv.FormatFloat(sd.thinkScale, 'g', -1, 64),
		"--rampup", strconv.Itoa(c.rampup)+"s", "--duration", strconv.Itoa(c.secs)+"s", "--results", dir)
	cancel()
	backends := <-most
	if err != nil {
		return sample{}, fmt.Errorf("%s: %w\n%s", sd.name, err, out)
	}
	res, err := harness.ReadResult(dir, "tpcc-run")
	if err != nil {
		return sample{}, err
	}
	if len(res.Steps) != 1 {
		return sample{}, fmt.Errorf("%s: %d steps", sd.name, len(res.Steps))
	}
	st := &res.Steps[0]
	ts, err := st.Terminals()
	if err != nil || ts == nil {
		return sample{}, fmt.Errorf("%s: terminals section: %v", sd.name, err)
	}
	return sample{backends: backends, ts: ts, step: st, cpu: cpu}, nil
}

// watchBackends polls pg_stat_activity for the monitor's sessions until ctx ends and
// returns the most seen at once.
func watchBackends(ctx context.Context, watch *pgx.Conn) int {
	most := 0
	for ctx.Err() == nil {
		var n int
		if err := watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`,
			tpcc.MonitorAppName).Scan(&n); err == nil {
			most = max(most, n)
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	return most
}

// line is a side's figures over samples (medians): what every round prints and the summary.
func line(sd side, ss []sample) string {
	med := func(f func(sample) float64) float64 { return harness.Median(ss, f) }
	ts := ss[0].ts
	rule := "within the terminal rule"
	if why := ts.OutsideSpec(); why != "" {
		rule = "OUTSIDE: " + why
	}
	rss := med(func(s sample) float64 {
		if p := s.ts.Driver.PeakRSSBytes; p != nil {
			return float64(*p)
		}
		return 0
	})
	out := fmt.Sprintf("%d terminals (%s) over %d sessions, at most %.0f monitor backends seen; driver peak RSS %s (target ≤ %s: %s), Go heap %s, Go runtime %s, driver CPU %.0f µs/tx",
		sd.terminals, rule, ts.Sessions, med(func(s sample) float64 { return float64(s.backends) }),
		units.FormatBytes(int64(rss)), units.FormatBytes(sd.maxRSS), harness.Met(rss > 0 && int64(rss) <= sd.maxRSS),
		units.FormatBytes(int64(med(func(s sample) float64 { return float64(s.ts.Driver.HeapBytes) }))),
		units.FormatBytes(int64(med(func(s sample) float64 { return float64(s.ts.Driver.GoSysBytes) }))),
		med(func(s sample) float64 { return s.step.Client.PerOpMicros }))
	out += fmt.Sprintf("\n    tpmC %.0f, %.2f per warehouse (bound %.2f for these terminals, %.2f by the specification); queue wait p90 %.1f ms, %.0f queued at the end",
		med(func(s sample) float64 { return s.ts.TpmC }), med(func(s sample) float64 { return s.ts.TpmCPerWarehouse }),
		ts.TpmCBound(), result.MaxTpmCPerWarehouse, med(func(s sample) float64 { return float64(s.ts.QueueWait["*"].P90) })/1000,
		med(func(s sample) float64 { return float64(s.ts.QueuedAtEnd) }))
	out += "\n    response p90 (clause 5.2.5.4 limit):"
	for i, k := range result.TPCCOps {
		var answered []sample
		for _, s := range ss {
			if op := s.step.Ops[k]; op != nil && op.Count > 0 {
				answered = append(answered, s)
			}
		}
		if len(answered) == 0 {
			out += fmt.Sprintf(" %s – (none answered)", k)
			continue
		}
		p90 := harness.Median(answered, func(s sample) float64 { return float64(s.step.Ops[k].Latency.P90) })
		out += fmt.Sprintf(" %s %.1f ms (%s %s)", k, p90/1000, time.Duration(result.ResponseLimitsMicros[i])*time.Microsecond,
			harness.Met(p90 <= float64(result.ResponseLimitsMicros[i])))
	}
	return out
}

// report prints each side's medians over the rounds.
func report(w *os.File, c config, sides []side, samples map[string][]sample) {
	fmt.Fprintf(w, "medians of %d round(s), %d warehouses, %d s windows:\n", c.rounds, c.warehouses, c.secs)
	for _, sd := range sides {
		fmt.Fprintf(w, "%-8s %s\n", sd.name, line(sd, samples[sd.name]))
	}
}
