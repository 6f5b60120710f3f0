// Command hosts measures read-only routing on modelled hosts, and what the budgets cost.
// A throwaway local cluster of a primary and one standby on this machine, each node a host
// of its own: -cpus cores (0.6) with a CPU weight in proportion (--host-cpu-shares auto),
// -memory (128M, page cache included), reads held to -read-bps (200M) and -read-iops (2500)
// on the disk that holds the data, in control groups (needs root); routing list
// (('standby1','primary')): routing on spreads read intent over the standby and the primary.
// The same cluster is measured in two states, one after the other in every round:
//
//	on      the budgets enforced
//	lifted  the budgets lifted (agbench cluster hosts --budgets off): each node still in its
//	        group, which only counts, on every CPU without limits: the same cluster, data and
//	        counting, so that on vs lifted is what the budgets themselves cost
//
// Optional further clusters (-clusters): kweight, the modelled cluster with the kernel's
// default CPU weight (--host-cpu-shares kernel), and shared, a cluster without control groups.
// Queries (agbench stress, --compare routing=off,on, interleaved): point, a point select on a
// table larger than a node's memory budget (IO-bound on a modelled host); count, count(*) on
// it (IO-bound: each host reads at its read budget; synchronize_seqscans is off, else
// concurrent scans share one pass and a node's scans per second are not held by its IO);
// small, count(*) on a table that fits in a node's memory (CPU-bound). Every round runs every
// query in every state; a figure is the median over the rounds of its whole-window rate
// (operations / window), its spread the lowest to highest round ("apart" when the spreads of
// routing off and on do not overlap; 3 rounds or more). The target: routing on >= 1.5x off at
// 8 threads and above with budgets on, spreads apart. Beside it: routing's cost at 1 thread,
// and the budgets' cost: it/s and the nodes' CPU per operation (their groups' CPU time over
// the window / operations) with budgets on vs lifted. Before each state's queries both nodes
// read both tables once, so that a state does not start with the cache the other left. The
// load average is printed per round. The results stay in -out (default: a new folder
// /tmp/agbench-bench-hosts-results.*, named at the end). `make bench-hosts` runs it, each
// flag's default from the environment variable named in its help; it is a benchmark, not a
// test.
//
// Imports from agbench: only bench/harness, internal/analyze, internal/cluster, internal/result,
// internal/stats.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// settings are the benchmark's knobs.
type settings struct {
	bin                           string
	cpus, memory, readBPS, iops   string
	rows, smallRows               string
	threads                       string
	duration, countDuration, ramp string
	rounds                        int
	clusters, states, queries     []string
	out                           string
}

// env is the value of the environment variable name, or def.
func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func parse() (*settings, error) {
	s := &settings{}
	str := func(p *string, name, envName, def, what string) {
		flag.StringVar(p, name, env(envName, def), what+" ($"+envName+")")
	}
	flag.StringVar(&s.bin, "agbench", "bin/agbench", "agbench binary")
	str(&s.cpus, "cpus", "HOSTS_CPUS", "0.6", "each node's cores")
	str(&s.memory, "memory", "HOSTS_MEMORY", "128M", "each node's memory, page cache included")
	str(&s.readBPS, "read-bps", "HOSTS_READ_BPS", "200M", "each node's read bytes per second")
	str(&s.iops, "read-iops", "HOSTS_READ_IOPS", "2500", "each node's reads per second")
	str(&s.rows, "rows", "HOSTS_ROWS", "400000", "rows of the table larger than a node's memory (208 MB)")
	str(&s.smallRows, "small-rows", "HOSTS_SMALL_ROWS", "50000", "rows of the table that fits (26 MB)")
	str(&s.threads, "threads", "HOSTS_THREADS", "1,8,12", "threads of each stress")
	str(&s.duration, "duration", "HOSTS_DURATION", "10s", "window of the point and small queries")
	str(&s.countDuration, "count-duration", "HOSTS_COUNT_DURATION", "45s", "window of the count query (a scan takes seconds)")
	str(&s.ramp, "rampup", "HOSTS_RAMPUP", "2s", "ramp-up of each stress")
	str(&s.out, "out", "HOSTS_OUT", "", "folder of the results (default: a new one under /tmp)")
	var rounds, clusters, states, queries string
	str(&rounds, "rounds", "HOSTS_ROUNDS", "3", "rounds")
	str(&clusters, "clusters", "HOSTS_CLUSTERS", "modelled", "clusters: modelled, kweight, shared")
	str(&states, "states", "HOSTS_STATES", "on lifted", "states of the budgets: on, lifted")
	str(&queries, "queries", "HOSTS_QUERIES", "point count small", "queries: point, count, small")
	flag.Parse()
	var bad []string
	if _, err := fmt.Sscan(rounds, &s.rounds); err != nil || s.rounds < 1 || fmt.Sprint(s.rounds) != rounds {
		bad = append(bad, fmt.Sprintf("-rounds: want a whole number above 0, not %s", rounds))
	}
	list := func(v, name string, known ...string) []string {
		f := strings.Fields(strings.ReplaceAll(v, ",", " "))
		for _, x := range f {
			if !slices.Contains(known, x) {
				bad = append(bad, fmt.Sprintf("-%s: unknown %s (%s)", name, x, strings.Join(known, ", ")))
			}
		}
		return f
	}
	s.clusters = list(clusters, "clusters", "modelled", "kweight", "shared")
	s.states = list(states, "states", "on", "lifted")
	s.queries = list(queries, "queries", "point", "count", "small")
	if len(bad) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(bad, "; "))
	}
	s.bin, _ = filepath.Abs(s.bin)
	return s, nil
}

func main() {
	s, err := parse()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench hosts:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, s); err != nil {
		fmt.Fprintln(os.Stderr, "bench hosts:", err)
		os.Exit(1)
	}
}
