// Command listener runs pgbench select-only (-S, prepared) straight to a primary and through
// the paths to it, at 1, 8 and 32 clients, interleaved (the order of the paths rotates each
// round) so a drifting machine favours no one; medians of -reps runs of -secs seconds each.
// Every path ends on the same primary of a throwaway agbench cluster:
//
//	direct        pgbench -> primary
//	agbench       pgbench -> agbench listener (proxied: startup parsed, then forwarded in the
//	              kernel by its BPF sockhash) -> primary
//	agbench-user  the same listener with --forward user (its own copy loops move the bytes)
//	redirect      pgbench -> the address agbench's /route answers (asked once per pgbench run;
//	              each session would ask once at login), i.e. the redirect path: routing costs
//	              one HTTP round trip per session and nothing per query
//	pgbouncer     pgbench -> pgbouncer (pool_mode=session) -> primary
//	haproxy       pgbench -> HAProxy (mode tcp) -> primary
//
// Besides TPS and latency it reports each proxy's own CPU time per transaction (utime+stime
// of its process over the run): on a shared, busy machine TPS swings with the neighbours,
// while CPU per transaction is what a proxy costs when the machine is the limit. Bytes the
// kernel forwards are moved by kernel worker threads, not the listener process, so for the
// agbench path that column understates; the machine column (all CPUs' busy time per
// transaction, from /proc/stat: server, pgbench, proxy and kernel alike) compares every path.
// Everything runs on loopback and is removed at the end. `make bench-listener` runs it; it is
// a benchmark, not a test.
//
// Imports from agbench: only bench/harness, internal/proc, internal/stats.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/agbench/agbench/bench/harness"
)

// allPaths are the paths in the order they are named, and the default.
var allPaths = []string{"direct", "agbench", "agbench-user", "redirect", "pgbouncer", "haproxy"}

// The target, judged on the per-round medians (each round pairs the paths with the direct
// run of the same minute): at 8 and 32 clients the proxied listener reaches 0.75x direct
// and is ahead of pgbouncer and HAProxy, the proxies users put in front of PostgreSQL
// today, so that routing through it costs less than what they already pay.
const minDirectRatio = 0.75

var targetClients = []int{8, 32}

func main() {
	bin := flag.String("agbench", "bin/agbench", "agbench binary")
	reps := flag.Int("reps", 7, "rounds (medians are taken over them)")
	secs := flag.Int("secs", 4, "seconds per pgbench run")
	clientsFlag := flag.String("clients", "1 8 32", "client counts (space- or comma-separated)")
	scale := flag.Int("scale", 10, "pgbench scale")
	pathsFlag := flag.String("paths", strings.Join(allPaths, " "), "paths to measure (space- or comma-separated)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	clients, paths, err := parseLists(*clientsFlag, *pathsFlag)
	if err == nil {
		abs, _ := filepath.Abs(*bin)
		err = run(ctx, abs, *reps, *secs, *scale, clients, paths)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench listener:", err)
		os.Exit(1)
	}
}

func parseLists(clientsFlag, pathsFlag string) ([]int, []string, error) {
	fields := func(s string) []string { return strings.Fields(strings.ReplaceAll(s, ",", " ")) }
	var clients []int
	for _, f := range fields(clientsFlag) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, nil, fmt.Errorf("-clients %q: not a list of counts", clientsFlag)
		}
		clients = append(clients, n)
	}
	paths := fields(pathsFlag)
	for _, p := range paths {
		if !slices.Contains(allPaths, p) {
			return nil, nil, fmt.Errorf("-paths: unknown path %q (%s)", p, strings.Join(allPaths, ", "))
		}
	}
	if len(clients) == 0 || len(paths) == 0 {
		return nil, nil, fmt.Errorf("-clients and -paths name at least one each")
	}
	return clients, paths, nil
}

func run(ctx context.Context, bin string, reps, secs, scale int, clients []int, paths []string) error {
	p, err := harness.StartCluster(ctx, "bench", 0, []string{"fsync=off", "max_connections=200"})
	if err != nil {
		return err
	}
	defer p.Close()
	harness.Header(os.Stdout, "pgbench through the agbench listener, pgbouncer and HAProxy against direct")
	fmt.Printf("== cluster: a lone primary on 127.0.0.1:%d (fsync=off), pgbench scale %d\n", p.Topo.Primary().Port, scale)
	pgbench, err := pgbenchBinary()
	if err != nil {
		return err
	}
	if _, _, err := harness.Run(ctx, p.Env, pgbench, "-i", "-q", "-s", strconv.Itoa(scale)); err != nil {
		return err
	}
	ps, err := startPaths(ctx, p, bin, paths)
	defer ps.stop()
	if err != nil {
		return err
	}
	m := &measurer{p: p, pgbench: pgbench, paths: ps, names: paths, secs: secs}
	if err := m.check(ctx); err != nil {
		return err
	}
	fmt.Printf("== pgbench -S -M prepared, %ds runs, %d rounds, paths interleaved\n", secs, reps)
	runs, failed, err := m.rounds(ctx, reps, clients)
	if err != nil {
		return err
	}
	report(runs, failed, clients, paths)
	harness.Footer(os.Stdout)
	return nil
}
