// Command seed runs the seeding article's experiment (reference/ag-direct-seeding-2016) on
// this machine: a throwaway cluster with a database grown to -size, seeded by direct and
// backup-restore, none vs lz4 vs zstd, -repeat rounds interleaved (agbench seed --compare
// rotates the variants), medians, and the seeding history. `make bench-seed` runs it; it
// is a benchmark, not a test.
//
// Imports from agbench: only bench/harness.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/agbench/agbench/bench/harness"
)

const clusterName = "seedbench"

func main() {
	bin := flag.String("agbench", "bin/agbench", "agbench binary")
	size := flag.String("size", "1G", "the database's size before seeding (seed --init-size)")
	repeat := flag.Int("repeat", 1, "rounds (medians are taken over them)")
	results := flag.String("results", "results", "folder of the result")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	abs, _ := filepath.Abs(*bin)
	if err := run(ctx, abs, *size, *repeat, *results); err != nil {
		fmt.Fprintln(os.Stderr, "bench seed:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, bin, size string, repeat int, results string) error {
	// The cluster's home is on the disk (/var/tmp), where the seeding's reads and writes go.
	home, err := os.MkdirTemp("/var/tmp", "agbench-bench-seed.")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	if err := os.Chmod(home, 0o755); err != nil {
		return err
	}
	port, err := harness.FreePorts(3) // the primary, the standby each seeding adds, one spare
	if err != nil {
		return err
	}
	env := append(os.Environ(), "AGBENCH_HOME="+home)
	agbench := func(args ...string) error {
		c := exec.CommandContext(ctx, bin, args...)
		c.Env, c.Stdout, c.Stderr = env, os.Stdout, os.Stderr
		if err := c.Run(); err != nil {
			return fmt.Errorf("agbench %v: %w", args, err)
		}
		return nil
	}
	harness.Header(os.Stdout, "agbench seed: direct against backup-restore, none, lz4 and zstd")
	if _, _, err := harness.Run(ctx, env, bin, "cluster", "create", "--name", clusterName, "--standbys", "0",
		"--base-port", strconv.Itoa(port)); err != nil {
		return err
	}
	defer func() {
		if _, _, err := harness.Run(context.Background(), env, bin, "cluster", "destroy", "--name", clusterName); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	if err := agbench("seed", "--cluster", clusterName, "--init-size", size, "--init-only"); err != nil {
		return err
	}
	// Other work on the machine changes the figures: its load is printed before and after.
	fmt.Printf("load average before the seeding: %s\n", harness.LoadAverage())
	if err := agbench("seed", "--cluster", clusterName, "--repeat", strconv.Itoa(repeat), "--results", results,
		"--compare", "method=direct,backup-restore", "compress=none,lz4,zstd"); err != nil {
		return err
	}
	harness.Footer(os.Stdout)
	return agbench("seed", "history", "--cluster", clusterName)
}
