// Command stress runs `agbench stress` with pgbench's select-only statement against
// `pgbench -S -M prepared` on one throwaway primary (pgbench -i), at 1, 2, 4 and 8 clients,
// interleaved (the order of the two tools alternates every round), and prints the medians
// of their transactions per second and client CPU per transaction, and the median of each
// round's agbench/pgbench ratios, on which the verdict rests. With -before REV, an agbench
// built from that git revision runs in every round too, and its figures and the new
// binary's ratios to it are printed. `make bench-stress` runs it; it is a benchmark, not a
// test.
//
// Imports from agbench: only bench/harness.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/agbench/agbench/bench/harness"
)

// Targets: at least pgbench's TPS, and no more client CPU per transaction, so that a stress
// run measures the server rather than its own client.
const (
	minTPSRatio = 1.0
	maxCPURatio = 1.0
)

type sample struct {
	tps, cpuUsPerTx, windowCPUUsPerTx float64
}

func (s sample) TPS() float64       { return s.tps }
func (s sample) CPU() float64       { return s.cpuUsPerTx }
func (s sample) WindowCPU() float64 { return s.windowCPUUsPerTx }

// bench is one benchmark's settings and its server.
type bench struct {
	p            *harness.Cluster
	bin, pgbench string
	secs, scale  int
	// beforeBin is the agbench of -before ("" without), the side named "before".
	beforeBin string
}

func main() {
	bin := flag.String("agbench", "bin/agbench", "agbench binary")
	pgbench := flag.String("pgbench", "pgbench", "pgbench binary")
	reps := flag.Int("reps", 7, "rounds (medians are taken over them)")
	secs := flag.Int("secs", 3, "seconds per run")
	scale := flag.Int("scale", 10, "pgbench scale")
	clientsFlag := flag.String("clients", "1,2,4,8", "client counts")
	before := flag.String("before", "", "git revision of an agbench to run beside the new one in every round (none when empty)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	clients, err := counts(clientsFlag)
	if err == nil {
		abs, _ := filepath.Abs(*bin)
		b := &bench{bin: abs, pgbench: *pgbench, secs: *secs, scale: *scale}
		if b.beforeBin, err = beforeBinary(ctx, *before); err == nil {
			err = run(ctx, b, *reps, clients)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench stress:", err)
		os.Exit(1)
	}
}

func counts(flagValue *string) ([]int, error) {
	var clients []int
	for _, s := range strings.Split(*flagValue, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-clients %q: not a list of counts", *flagValue)
		}
		clients = append(clients, n)
	}
	return clients, nil
}

// beforeBinary builds (or finds in the cache) the agbench of revision rev; "" for none.
func beforeBinary(ctx context.Context, rev string) (string, error) {
	if rev == "" {
		return "", nil
	}
	commit, err := harness.BeforeRevision(ctx, rev)
	if err != nil {
		return "", err
	}
	return harness.BuildBefore(ctx, commit)
}

func run(ctx context.Context, b *bench, reps int, clients []int) error {
	p, err := harness.StartCluster(ctx, "bench", 0, []string{"fsync=off", "max_connections=100"})
	if err != nil {
		return err
	}
	defer p.Close()
	b.p = p
	harness.Header(os.Stdout, "agbench stress against pgbench -S")
	fmt.Printf("== primary 127.0.0.1:%d (fsync=off), pgbench -i -s %d; %d rounds of %ds per tool and client count\n",
		p.Topo.Primary().Port, b.scale, reps, b.secs)
	if b.beforeBin != "" {
		fmt.Printf("before: %s, beside the new binary %s\n", b.beforeBin, b.bin)
	}
	if _, _, err := harness.Run(ctx, p.Env, b.pgbench, "-i", "-q", "-s", strconv.Itoa(b.scale)); err != nil {
		return err
	}
	samples := map[string]map[int][]sample{"pgbench": {}, "agbench": {}, "before": {}}
	tools := []string{"pgbench", "agbench"}
	if b.beforeBin != "" {
		tools = append(tools, "before")
	}
	for r := 0; r < reps; r++ {
		for _, n := range clients {
			for _, tool := range harness.Rotate(tools, r+n) {
				s, err := b.measure(ctx, tool, n)
				if err != nil {
					return fmt.Errorf("round %d, %d clients, %s: %w", r+1, n, tool, err)
				}
				fmt.Printf("round %d  clients %d  %-7s  %8.0f tps  %6.1f us CPU/tx\n", r+1, n, tool, s.tps, s.cpuUsPerTx)
				samples[tool][n] = append(samples[tool][n], s)
			}
		}
	}
	report(samples, clients, reps)
	if b.beforeBin != "" {
		reportBefore(samples, clients)
	}
	harness.Footer(os.Stdout)
	return nil
}

func report(samples map[string]map[int][]sample, clients []int, reps int) {
	fmt.Printf("\nmedians of %d rounds; CPU is the client process's user+system time per transaction\n", reps)
	fmt.Println("clients  pgbench tps  agbench tps  ratio   pgbench us/tx  agbench us/tx  ratio  (agbench window only us/tx)")
	for _, n := range clients {
		pg, ag := samples["pgbench"][n], samples["agbench"][n]
		pt, at := harness.Median(pg, sample.TPS), harness.Median(ag, sample.TPS)
		pc, ac := harness.Median(pg, sample.CPU), harness.Median(ag, sample.CPU)
		fmt.Printf("%7d  %11.0f  %11.0f  %5.2fx  %13.1f  %13.1f  %5.2fx  (%.1f)\n", n, pt, at, at/pt, pc, ac, ac/pc,
			harness.Median(ag, sample.WindowCPU))
	}
	// The machine's speed drifts by more than the tools differ (other tenants of the host),
	// so the verdict rests on the median of each round's own ratio: the two tools of a round
	// ran back to back, in alternating order.
	fmt.Println("\nmedian of the per-round ratios (agbench/pgbench of the same round)")
	fmt.Println("clients    tps   CPU/tx")
	ok := true
	for _, n := range clients {
		t, _ := harness.RoundRatio(samples["agbench"][n], samples["pgbench"][n], sample.TPS)
		c, _ := harness.RoundRatio(samples["agbench"][n], samples["pgbench"][n], sample.CPU)
		fmt.Printf("%7d  %5.2fx  %5.2fx\n", n, t, c)
		ok = ok && t >= minTPSRatio && c <= maxCPURatio
	}
	if ok {
		fmt.Printf("target met: TPS ratio >= %.2f and CPU ratio <= %.2f at every client count\n", minTPSRatio, maxCPURatio)
	} else {
		fmt.Printf("target NOT met at some client count (TPS ratio >= %.2f, CPU ratio <= %.2f)\n", minTPSRatio, maxCPURatio)
	}
}

// reportBefore prints the before binary beside the new one: medians, and the median of the
// per-round ratios new/before and before/pgbench.
func reportBefore(samples map[string]map[int][]sample, clients []int) {
	fmt.Println("\nthe before binary beside the new one (medians; ratios: the median of the per-round ratios)")
	fmt.Println("clients  before tps  new tps  new/before   before us/tx  new us/tx  new/before   before/pgbench tps  CPU/tx")
	for _, n := range clients {
		bf, ag, pg := samples["before"][n], samples["agbench"][n], samples["pgbench"][n]
		t, _ := harness.RoundRatio(ag, bf, sample.TPS)
		c, _ := harness.RoundRatio(ag, bf, sample.CPU)
		pt, _ := harness.RoundRatio(bf, pg, sample.TPS)
		pc, _ := harness.RoundRatio(bf, pg, sample.CPU)
		fmt.Printf("%7d  %10.0f  %7.0f  %9.2fx  %13.1f  %9.1f  %9.2fx  %18.2fx  %5.2fx\n", n,
			harness.Median(bf, sample.TPS), harness.Median(ag, sample.TPS), t,
			harness.Median(bf, sample.CPU), harness.Median(ag, sample.CPU), c, pt, pc)
	}
}

func (b *bench) measure(ctx context.Context, tool string, n int) (sample, error) {
	switch tool {
	case "pgbench":
		return b.runPgbench(ctx, n)
	case "before":
		return b.runAgbench(ctx, b.beforeBin, n)
	}
	return b.runAgbench(ctx, b.bin, n)
}

var (
	tpsRE = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)
	txRE  = regexp.MustCompile(`number of transactions actually processed: (\d+)`)
)

func (b *bench) runPgbench(ctx context.Context, n int) (sample, error) {
	out, cpu, err := harness.Run(ctx, b.p.Env, b.pgbench, "-S", "-M", "prepared", "-n", "-c", strconv.Itoa(n), "-j", strconv.Itoa(n),
		"-T", strconv.Itoa(b.secs))
	if err != nil {
		return sample{}, err
	}
	tps, tx := tpsRE.FindSubmatch(out), txRE.FindSubmatch(out)
	if tps == nil || tx == nil {
		return sample{}, fmt.Errorf("cannot read pgbench's output:\n%s", out)
	}
	t, _ := strconv.ParseFloat(string(tps[1]), 64)
	n64, _ := strconv.ParseFloat(string(tx[1]), 64)
	return sample{tps: t, cpuUsPerTx: float64(cpu.Microseconds()) / n64}, nil
}

func (b *bench) runAgbench(ctx context.Context, bin string, n int) (sample, error) {
	results := filepath.Join(b.p.Home, "results")
	os.RemoveAll(results)
	_, cpu, err := harness.Run(ctx, b.p.Env, bin, "stress", "--primary", b.p.ConnString(""),
		"--query", "SELECT abalance FROM pgbench_accounts WHERE aid = $1", "--param-range", fmt.Sprintf("1:%d", 100000*b.scale),
		"--threads", strconv.Itoa(n), "--iterations", "0", "--duration", fmt.Sprintf("%ds", b.secs), "--results", results)
	if err != nil {
		return sample{}, err
	}
	r, err := harness.ReadResult(results, "stress")
	if err != nil {
		return sample{}, err
	}
	if len(r.Steps) != 1 {
		return sample{}, fmt.Errorf("%d steps in the result, want 1", len(r.Steps))
	}
	st := r.Steps[0]
	tx := float64(st.Totals().Count)
	return sample{tps: st.OpsPerSecond(), cpuUsPerTx: float64(cpu.Microseconds()) / tx, windowCPUUsPerTx: st.Client.PerOpMicros}, nil
}
