// Command tpcc measures what a TPC-C transaction costs agbench: the CPU per transaction of
// the driver and of every server process (per transaction the driver completed), of a
// "before" agbench built from a git revision (default: the merge base with main) beside the
// binary under test, in both modes, on one PostgreSQL server that it starts itself (a
// throwaway lone primary on a loopback port, fsync on), each binary on a database it built
// itself, interleaved (the order of the runs rotates every round), with medians and the
// median of the per-round ratios. The work must be equal: the rows changed per New-Order
// (pg_stat_user_tables) of the two binaries are checked to agree within 1%. It also runs
// the new binary with its samplers on and reports what they cost: the change in CPU per
// transaction, and their own backends' share of the server's CPU (read from /proc while the
// run lasts). go-tpc (built from its public source once, gotpc.go) can run beside them
// (-gotpc-side). `make bench-tpcc` runs it; it is a benchmark, not a test.
//
// Imports from agbench: only bench/harness, internal/cluster, internal/proc, internal/sample.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agbench/agbench/bench/harness"
	"github.com/agbench/agbench/internal/cluster"
)

// Targets: the new binary's CPU per transaction (driver + server) at least minCPUGain times
// fewer µs than the before binary's, in both modes, at equal work (rows changed per
// New-Order within maxWorkDiff); the samplers' backends at most maxSamplerShare of the
// server's CPU.
const (
	minCPUGain      = 1.25
	maxWorkDiff     = 0.01
	maxSamplerShare = 0.02
)

func main() {
	bin := flag.String("agbench", "bin/agbench", "agbench binary under test (the new one)")
	before := flag.String("before", "", "git revision of the before binary, built in a temporary worktree (default: the merge base of HEAD and main)")
	beforeBin := flag.String("before-bin", "", "a before binary already built (instead of -before)")
	withGoTPC := flag.Bool("gotpc-side", false, "run go-tpc beside them (built from its source once)")
	gotpc := flag.String("gotpc", "", "go-tpc binary (default: built from its source once, into $AGBENCH_CACHE or the user's cache folder)")
	samplers := flag.Bool("samplers", true, "also run the new binary with its samplers on (functions mode) and report their cost")
	rounds := flag.Int("rounds", 3, "rounds (medians are taken over them)")
	secs := flag.Int("secs", 60, "seconds per run")
	warehouses := flag.Int("warehouses", 2, "warehouses")
	vus := flag.Int("vus", 2, "virtual users (go-tpc threads)")
	commits := flag.String("commit", "on,off", "synchronous_commit settings, each measured in turn on the same server and data")
	var sets []string
	flag.Func("set", "a server setting key=value (repeatable), e.g. synchronous_commit=off", func(v string) error {
		if _, err := cluster.ParseSettings([]string{v}); err != nil {
			return err
		}
		sets = append(sets, v)
		return nil
	})
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var commitList []string
	for _, c := range strings.Split(*commits, ",") {
		if _, err := cluster.ParseSettings([]string{"synchronous_commit=" + c}); err != nil || c == "" {
			fmt.Fprintf(os.Stderr, "bench tpcc: -commit %q: a comma-separated list of synchronous_commit values (on, off, local …)\n", *commits)
			os.Exit(2)
		}
		commitList = append(commitList, c)
	}
	abs, _ := filepath.Abs(*bin)
	b := &bench{bin: abs, beforeBin: *beforeBin, secs: *secs, wh: *warehouses, vus: *vus}
	err := b.binaries(ctx, *before, *withGoTPC, *gotpc)
	if err == nil {
		b.sides = sides(b, *withGoTPC, *samplers)
		err = run(ctx, b, *rounds, sets, commitList)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench tpcc:", err)
		os.Exit(1)
	}
}

type bench struct {
	topo           *cluster.Topology
	env            []string
	bin, beforeBin string
	beforeRev      string // the before binary's commit ("" when given as a binary)
	gotpc          string
	password       string
	secs, wh       int
	vus            int
	work           string
	sides          []side
}

// binaries finds or builds the before binary and, when it runs, go-tpc.
func (b *bench) binaries(ctx context.Context, before string, withGoTPC bool, gotpc string) error {
	if b.beforeBin == "" {
		rev, err := harness.BeforeRevision(ctx, before)
		if err != nil {
			return fmt.Errorf("-before: %w", err)
		}
		if b.beforeBin, err = harness.BuildBefore(ctx, rev); err != nil {
			return err
		}
		b.beforeRev = rev
	}
	if !withGoTPC {
		return nil
	}
	b.gotpc = gotpc
	if gotpc != "" {
		return nil
	}
	var err error
	b.gotpc, err = buildGoTPC(ctx)
	return err
}

func run(ctx context.Context, b *bench, rounds int, sets, commits []string) error {
	p, err := harness.StartCluster(ctx, "bench", 0, append([]string{"shared_buffers=1GB", "max_wal_size=8GB",
		"checkpoint_timeout=30min", "max_connections=100", "shared_preload_libraries=pg_stat_statements",
		"pg_stat_statements.track_utility=on"}, sets...))
	if err != nil {
		return err
	}
	defer p.Close()
	b.topo, b.env, b.work = p.Topo, p.Env, p.Home
	if b.password, err = p.Password(); err != nil {
		return err
	}
	var version string
	if err := b.query(ctx, b.topo.Database, `SELECT format('PostgreSQL %s on 127.0.0.1:%s, shared_buffers=%s, fsync %s',
		current_setting('server_version'), current_setting('port'), current_setting('shared_buffers'), current_setting('fsync'))`,
		&version); err != nil {
		return err
	}
	harness.Header(os.Stdout, "agbench tpcc: CPU per transaction, before and new binary")
	fmt.Printf("one server for all: %s, pg_stat_statements\n", version)
	before := b.beforeBin
	if b.beforeRev != "" {
		before = fmt.Sprintf("built from %.12s (%s)", b.beforeRev, b.beforeBin)
	}
	fmt.Printf("before: %s\nnew:    %s\n", before, b.bin)
	fmt.Printf("%d warehouses, %d VUs, %d s per run, %d rounds, order rotated each round; no keying or think time;\n", b.wh, b.vus, b.secs, rounds)
	fmt.Printf("each binary on a database it built; synchronous_commit %s in turn, on the same server and data\n\n", strings.Join(commits, ", then "))
	if err := b.prepare(ctx); err != nil {
		return err
	}
	for _, commit := range commits {
		if err := b.rounds(ctx, commit, rounds); err != nil {
			return err
		}
	}
	return nil
}

// prepare makes a database per binary (and go-tpc's) on the one server and loads it with
// that binary (tool).
func (b *bench) prepare(ctx context.Context) error {
	built := map[string]bool{}
	for _, sd := range b.sides {
		if built[sd.db] {
			continue
		}
		built[sd.db] = true
		t0 := time.Now()
		what := sd.bin + " tpcc build"
		err := b.createDB(ctx, sd.db)
		if err == nil && sd.gotpc {
			what = "go-tpc tpcc prepare"
			err = b.cmd(ctx, b.gotpc, append(b.gotpcArgs("prepare"), "-T", strconv.Itoa(b.wh))...)
		} else if err == nil {
			err = b.cmd(ctx, sd.bin, "tpcc", "build", "--primary", b.topo.ConnString(b.topo.Primary(), sd.db), "--warehouses", strconv.Itoa(b.wh))
		}
		if err != nil {
			return fmt.Errorf("%s into %s: %w", what, sd.db, err)
		}
		fmt.Printf("%-12s %6.1fs  %s\n", sd.db, time.Since(t0).Seconds(), what)
	}
	return nil
}

func (b *bench) createDB(ctx context.Context, db string) error {
	if _, err := b.exec(ctx, b.topo.Database, "CREATE DATABASE "+db); err != nil {
		return err
	}
	_, err := b.exec(ctx, db, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
	return err
}

// rounds measures every side with synchronous_commit set to commit, the order rotated each
// round, and reports their medians.
func (b *bench) rounds(ctx context.Context, commit string, rounds int) error {
	if err := b.setCommit(ctx, commit); err != nil {
		return err
	}
	fmt.Printf("\n== synchronous_commit %s · %s UTC · load average %s\n", commit, time.Now().UTC().Format("15:04"), harness.LoadAverage())
	printRowHeader("round")
	samples := map[string][]sample{}
	for r := 0; r < rounds; r++ {
		for _, sd := range harness.Rotate(b.sides, r) {
			s, err := b.measure(ctx, sd, commit, r)
			if err != nil {
				return fmt.Errorf("synchronous_commit %s, round %d, %s: %w", commit, r+1, sd.name, err)
			}
			samples[sd.name] = append(samples[sd.name], s)
			printRow(strconv.Itoa(r+1), sd.name, s)
		}
	}
	harness.Footer(os.Stdout)
	report(b.sides, samples, rounds)
	return nil
}

// setCommit sets synchronous_commit for the sessions that start after it (the server's
// configuration, reloaded) and checks that a new session sees it.
func (b *bench) setCommit(ctx context.Context, commit string) error {
	for _, q := range []string{"ALTER SYSTEM SET synchronous_commit = '" + commit + "'", "SELECT pg_reload_conf()"} {
		if _, err := b.exec(ctx, b.topo.Database, q); err != nil {
			return fmt.Errorf("synchronous_commit %s: %w", commit, err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var got string
		if err := b.query(ctx, b.topo.Database, "SELECT current_setting('synchronous_commit')", &got); err != nil {
			return err
		}
		if got == commit {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("synchronous_commit is %s 10 s after setting it to %s", got, commit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
