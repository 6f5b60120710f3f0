// Command benchstress runs `agbench stress` with pgbench's select-only statement against
// `pgbench -S -M prepared` on one throwaway primary (pgbench -i), at 1, 2, 4 and 8 clients,
// interleaved (the order of the two tools alternates every round), and prints the medians
// of their transactions per second and client CPU per transaction, and the median of each
// round's agbench/pgbench ratios, on which the verdict rests. `make bench-stress` runs it;
// it is a benchmark, not a test.
//
// Imports from agbench: only internal/cluster, internal/result, internal/stats.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/stats"
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

func main() {
	bin := flag.String("agbench", "bin/agbench", "agbench binary")
	pgbench := flag.String("pgbench", "pgbench", "pgbench binary")
	reps := flag.Int("reps", 7, "rounds (medians are taken over them)")
	secs := flag.Int("secs", 3, "seconds per run")
	scale := flag.Int("scale", 10, "pgbench scale")
	clientsFlag := flag.String("clients", "1,2,4,8", "client counts")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *bin, *pgbench, *reps, *secs, *scale, *clientsFlag); err != nil {
		fmt.Fprintln(os.Stderr, "benchstress:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, bin, pgbench string, reps, secs, scale int, clientsFlag string) error {
	bin, _ = filepath.Abs(bin)
	var clients []int
	for _, s := range strings.Split(clientsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("-clients %q: not a list of counts", clientsFlag)
		}
		clients = append(clients, n)
	}
	work, err := os.MkdirTemp("", "agbench-bench-stress-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	os.Chmod(work, 0o755)
	topo, err := cluster.Create(ctx, cluster.CreateOptions{Home: work, Name: "bench", Standbys: 0, Commit: cluster.CommitAsync,
		BasePort: freePort(), Settings: []string{"fsync=off", "max_connections=100"}})
	if err != nil {
		return fmt.Errorf("create cluster: %w", err)
	}
	defer topo.Destroy(context.Background())
	p := topo.Primary()
	env := append(os.Environ(), "PGHOST="+p.Host, "PGPORT="+strconv.Itoa(p.Port), "PGUSER="+topo.Superuser,
		"PGDATABASE="+topo.Database, "PGPASSFILE="+topo.PassFile)
	fmt.Printf("== primary 127.0.0.1:%d (fsync=off), pgbench -i -s %d; %d rounds of %ds per tool and client count\n", p.Port, scale, reps, secs)
	if out, err := command(ctx, env, pgbench, "-i", "-q", "-s", strconv.Itoa(scale)).CombinedOutput(); err != nil {
		return fmt.Errorf("pgbench -i: %v\n%s", err, out)
	}
	cs := topo.ConnString(p, "")
	samples := map[string]map[int][]sample{"pgbench": {}, "agbench": {}}
	for r := 0; r < reps; r++ {
		for _, n := range clients {
			order := []string{"pgbench", "agbench"}
			if (r+n)%2 == 1 {
				order[0], order[1] = order[1], order[0]
			}
			for _, tool := range order {
				var s sample
				var err error
				if tool == "pgbench" {
					s, err = runPgbench(ctx, env, pgbench, n, secs)
				} else {
					s, err = runAgbench(ctx, env, bin, cs, filepath.Join(work, "results"), n, secs, scale)
				}
				if err != nil {
					return fmt.Errorf("round %d, %d clients, %s: %w", r+1, n, tool, err)
				}
				fmt.Printf("round %d  clients %d  %-7s  %8.0f tps  %6.1f us CPU/tx\n", r+1, n, tool, s.tps, s.cpuUsPerTx)
				samples[tool][n] = append(samples[tool][n], s)
			}
		}
	}
	fmt.Printf("\nmedians of %d rounds; CPU is the client process's user+system time per transaction\n", reps)
	fmt.Println("clients  pgbench tps  agbench tps  ratio   pgbench us/tx  agbench us/tx  ratio  (agbench window only us/tx)")
	for _, n := range clients {
		pt := median(samples["pgbench"][n], func(s sample) float64 { return s.tps })
		at := median(samples["agbench"][n], func(s sample) float64 { return s.tps })
		pc := median(samples["pgbench"][n], func(s sample) float64 { return s.cpuUsPerTx })
		ac := median(samples["agbench"][n], func(s sample) float64 { return s.cpuUsPerTx })
		aw := median(samples["agbench"][n], func(s sample) float64 { return s.windowCPUUsPerTx })
		fmt.Printf("%7d  %11.0f  %11.0f  %5.2fx  %13.1f  %13.1f  %5.2fx  (%.1f)\n", n, pt, at, at/pt, pc, ac, ac/pc, aw)
	}
	// The machine's speed drifts by more than the tools differ (other tenants of the host),
	// so the verdict rests on the median of each round's own ratio: the two tools of a round
	// ran back to back, in alternating order.
	fmt.Println("\nmedian of the per-round ratios (agbench/pgbench of the same round)")
	fmt.Println("clients    tps   CPU/tx")
	ok := true
	for _, n := range clients {
		var tr, cr []float64
		for i, a := range samples["agbench"][n] {
			p := samples["pgbench"][n][i]
			tr, cr = append(tr, a.tps/p.tps), append(cr, a.cpuUsPerTx/p.cpuUsPerTx)
		}
		t, c := stats.Median(tr), stats.Median(cr)
		fmt.Printf("%7d  %5.2fx  %5.2fx\n", n, t, c)
		ok = ok && t >= minTPSRatio && c <= maxCPURatio
	}
	if ok {
		fmt.Printf("target met: TPS ratio >= %.2f and CPU ratio <= %.2f at every client count\n", minTPSRatio, maxCPURatio)
	} else {
		fmt.Printf("target NOT met at some client count (TPS ratio >= %.2f, CPU ratio <= %.2f)\n", minTPSRatio, maxCPURatio)
	}
	return nil
}

func command(ctx context.Context, env []string, name string, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, name, args...)
	c.Env = env
	return c
}

var (
	tpsRE = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)
	txRE  = regexp.MustCompile(`number of transactions actually processed: (\d+)`)
)

func runPgbench(ctx context.Context, env []string, pgbench string, n, secs int) (sample, error) {
	c := command(ctx, env, pgbench, "-S", "-M", "prepared", "-n", "-c", strconv.Itoa(n), "-j", strconv.Itoa(n), "-T", strconv.Itoa(secs))
	out, err := c.CombinedOutput()
	if err != nil {
		return sample{}, fmt.Errorf("%v\n%s", err, out)
	}
	tps, tx := tpsRE.FindSubmatch(out), txRE.FindSubmatch(out)
	if tps == nil || tx == nil {
		return sample{}, fmt.Errorf("cannot read pgbench's output:\n%s", out)
	}
	t, _ := strconv.ParseFloat(string(tps[1]), 64)
	n64, _ := strconv.ParseFloat(string(tx[1]), 64)
	cpu := c.ProcessState.UserTime() + c.ProcessState.SystemTime()
	return sample{tps: t, cpuUsPerTx: float64(cpu.Microseconds()) / n64}, nil
}

func runAgbench(ctx context.Context, env []string, bin, cs, results string, n, secs, scale int) (sample, error) {
	os.RemoveAll(results)
	c := command(ctx, env, bin, "stress", "--primary", cs, "--query", "SELECT abalance FROM pgbench_accounts WHERE aid = $1",
		"--param-range", fmt.Sprintf("1:%d", 100000*scale), "--threads", strconv.Itoa(n), "--iterations", "0",
		"--duration", fmt.Sprintf("%ds", secs), "--results", results)
	out, err := c.CombinedOutput()
	if err != nil {
		return sample{}, fmt.Errorf("%v\n%s", err, out)
	}
	dirs, _ := filepath.Glob(filepath.Join(results, "*-stress"))
	if len(dirs) != 1 {
		return sample{}, fmt.Errorf("no result file:\n%s", out)
	}
	r, err := result.Read(dirs[0])
	if err != nil || len(r.Steps) != 1 {
		return sample{}, fmt.Errorf("result: %v", err)
	}
	st := r.Steps[0]
	tx := float64(st.Totals().Count)
	cpu := c.ProcessState.UserTime() + c.ProcessState.SystemTime()
	return sample{tps: st.OpsPerSecond(), cpuUsPerTx: float64(cpu.Microseconds()) / tx, windowCPUUsPerTx: st.Client.PerOpMicros}, nil
}

func median(xs []sample, f func(sample) float64) float64 {
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = f(x)
	}
	return stats.Median(v)
}

// freePort returns a loopback port that is free now (below the ephemeral range).
func freePort() int {
	for i := 0; i < 200; i++ {
		p := 20000 + int(time.Now().UnixNano()%12000)
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p)); err == nil {
			l.Close()
			return p
		}
	}
	return 0
}
