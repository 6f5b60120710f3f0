package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/agbench/agbench/bench/harness"
	"github.com/agbench/agbench/internal/proc"
)

// runResult is one pgbench run through one path.
type runResult struct {
	clients, round int
	path           string
	tps, latencyMs float64
	proxyUs        float64 // the proxy process's CPU per transaction (0: the path has none)
	machineUs      float64 // all CPUs' busy time per transaction
}

type measurer struct {
	p       *harness.Cluster
	pgbench string
	paths   *pathSet
	names   []string // the paths measured
	secs    int
}

// check waits until every path answers a transaction, and reads pgbouncer's own pid.
func (m *measurer) check(ctx context.Context) error {
	for _, path := range m.names {
		err := waitUntil(ctx, 30*time.Second, func() error {
			port, err := m.paths.port(ctx, path)
			if err != nil {
				return err
			}
			_, _, err = harness.Run(ctx, m.p.Env, m.pgbench, "-n", "-S", "-t", "1", "-h", "127.0.0.1", "-p", strconv.Itoa(port))
			return err
		})
		if err != nil {
			return fmt.Errorf("path %s does not work (logs in %s): %w", path, m.p.Home, err)
		}
	}
	pid, ok := bouncerPID(m.p)
	if !ok {
		return fmt.Errorf("pgbouncer wrote no pid file")
	}
	m.paths.pids["pgbouncer"] = pid
	return nil
}

// rounds runs pgbench through every path, reps rounds per client count, the order of the
// paths rotated each round. A failed run is counted and left out of the medians.
func (m *measurer) rounds(ctx context.Context, reps int, clients []int) ([]runResult, map[string]int, error) {
	var runs []runResult
	failed := map[string]int{}
	for _, c := range clients {
		for r := 1; r <= reps; r++ {
			for _, path := range harness.Rotate(m.names, r) {
				res, err := m.once(ctx, path, c)
				if ctx.Err() != nil {
					return nil, nil, ctx.Err()
				}
				if err != nil {
					failed[fmt.Sprintf("%d %s", c, path)]++
					fmt.Print("x")
					continue
				}
				res.round = r
				runs = append(runs, res)
				fmt.Print(".")
			}
		}
	}
	fmt.Println()
	return runs, failed, nil
}

var (
	tpsRE     = regexp.MustCompile(`(?m)^tps = ([0-9.]+)`)
	latencyRE = regexp.MustCompile(`(?m)^latency average = ([0-9.]+) ms`)
	txRE      = regexp.MustCompile(`(?m)^number of transactions actually processed: ([0-9]+)`)
)

// once runs pgbench through path with c clients and takes the proxy's and the machine's
// CPU time around it.
func (m *measurer) once(ctx context.Context, path string, c int) (runResult, error) {
	port, err := m.paths.port(ctx, path)
	if err != nil {
		return runResult{}, err
	}
	j := min(c, 2)
	pid, own := m.paths.pids[path]
	p0, b0 := m.proxyTicks(pid, own), busyTicks()
	out, _, err := harness.Run(ctx, m.p.Env, m.pgbench, "-n", "-S", "-M", "prepared", "-c", strconv.Itoa(c), "-j", strconv.Itoa(j),
		"-T", strconv.Itoa(m.secs), "-h", "127.0.0.1", "-p", strconv.Itoa(port))
	p1, b1 := m.proxyTicks(pid, own), busyTicks()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return runResult{}, err
	}
	tps, lat, n := tpsRE.FindSubmatch(out), latencyRE.FindSubmatch(out), txRE.FindSubmatch(out)
	if tps == nil || lat == nil || n == nil {
		return runResult{}, fmt.Errorf("cannot read pgbench's output:\n%s", out)
	}
	tx, _ := strconv.ParseFloat(string(n[1]), 64)
	if tx == 0 {
		return runResult{}, fmt.Errorf("no transaction:\n%s", out)
	}
	r := runResult{clients: c, path: path}
	r.tps, _ = strconv.ParseFloat(string(tps[1]), 64)
	r.latencyMs, _ = strconv.ParseFloat(string(lat[1]), 64)
	perTx := func(ticks uint64) float64 { return proc.Seconds(ticks) * 1e6 / tx }
	r.proxyUs, r.machineUs = perTx(p1-p0), perTx(b1-b0)
	return r, nil
}

// proxyTicks is a proxy process's own CPU time in clock ticks; 0 for a path without one.
func (m *measurer) proxyTicks(pid int, own bool) uint64 {
	if !own {
		return 0
	}
	st, err := proc.ReadStat(proc.Root, pid)
	if err != nil {
		return 0
	}
	return st.OwnTicks()
}

// busyTicks is all CPUs' busy time (user, nice, system, irq, softirq, steal) in clock ticks.
func busyTicks() uint64 {
	st, err := proc.Host.CPUStat()
	if err != nil {
		return 0
	}
	a := st.All
	return a.User + a.Nice + a.System + a.IRQ + a.SoftIRQ + a.Steal
}
