package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/render"
	"github.com/agbench/agbench/internal/workload/readahead"
)

func init() { registerKind(readahead.Name, newReadaheadCmd) }

// readaheadFlags are the flags of `agbench readahead`, and the experiment check made.
type readaheadFlags struct {
	experiment.ReadaheadSettings
	r *experiment.Readahead
}

func newReadaheadCmd(a *app) *cobra.Command {
	var f readaheadFlags
	c := &cobra.Command{
		Use: "readahead",
		Annotations: map[string]string{noConnStrings: "readahead restarts its server and drops the caches between runs, " +
			"so it runs on an agbench cluster (--cluster NAME) or, by default, on a private throwaway server of its own; a cluster made by hand is not touched"},
		Long: `The read-ahead article's experiment for PostgreSQL. Builds the article's tables
(testtable clustered on id, testtable2 a copy clustered on idvarchar), then runs its
queries — a range scan id < N, a full scan, and the join as a nested loop and as a bitmap
heap scan — each on a cold cache with prefetching off and on, interleaved, --repeat times,
and prints our STATISTICS IO: buffer hits (logical reads), reads (physical), IO operations
and average IO size, IO read time (track_io_timing), the plan node, elapsed time, medians,
and the off/on ratio.

Prefetch off: effective_io_concurrency = 0 (and io_combine_limit = 1 on 17+); on the
private device also read_ahead_kb = 0, the kernel's read-ahead that PostgreSQL 15 relies
on for sequential scans. Cold: debug_io_direct = data and emptied shared buffers on 16+;
a restart and posix_fadvise(DONTNEED) of the relation files on 15. A run that read
nothing from storage is reported warm, not cold.

Target: --cluster NAME (an agbench cluster's primary: restarted between runs; a database
agbench_readahead is made and dropped), or a private throwaway server made from --pg-bin
DIR (default: the installed PostgreSQL) in a temporary folder and destroyed after. As
root, the tables go on a loop device agbench makes (sparse file, ext4), whose read-ahead
it sets and which --throttle-iops limits (cgroup v1 blkio); it is always removed after.`,
		Args:    noArgs,
		PreRunE: func(*cobra.Command, []string) (err error) { f.r, err = f.Spec(); return err },
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runReadahead(cmd.Context(), a, &f, cmdArgs(cmd))
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.Cluster, "cluster", "", "run on this agbench cluster's primary")
	fl.StringVar(&f.PGBin, "pg-bin", "", "run on a private throwaway server of these binaries (default: installed PostgreSQL)")
	fl.StringVar(&f.Results, "results", "results", "folder for results/<time>-readahead/result.json")
	fl.StringVar(&f.Out, "out", "", "old spelling of --results")
	_ = fl.MarkHidden("out")
	fl.Int64Var(&f.Config.Rows, "rows", readahead.DefaultRows, "rows of each table")
	fl.Int64Var(&f.Config.RangeIDs, "range-ids", 0, fmt.Sprintf("range scan bound: id < N (default %d, or --rows when fewer)", readahead.DefaultRangeIDs))
	fl.Int64Var(&f.Config.JoinIDs, "join-ids", 0, fmt.Sprintf("join bound: id < N (default %d)", readahead.DefaultJoinIDs))
	fl.IntVar(&f.Config.Repeat, "repeat", readahead.DefaultRepeat, "runs of each query and side (medians are reported)")
	fl.StringSliceVar(&f.Config.Queries, "queries", readahead.QueryNames, "queries to run")
	fl.StringVar(&f.Config.Device, "device", readahead.DeviceAuto, "auto (a private loop device when root) or none")
	fl.IntVar(&f.Config.ReadAheadKB, "read-ahead-kb", readahead.DefaultReadAheadKB, "the device's read_ahead_kb with prefetch on")
	fl.IntVar(&f.Config.IOConcurrency, "io-concurrency", readahead.DefaultIOConcurrency, "effective_io_concurrency with prefetch on")
	fl.IntVar(&f.Config.ThrottleIOPS, "throttle-iops", 0, "limit the private device to N reads per second (storage under pressure)")
	fl.BoolVar(&f.Config.DropCaches, "drop-caches", false, "also drop the whole OS page cache before each cold run (global!)")
	fl.Int64Var(&f.Config.Seed, "seed", 1, "seed of the tables' random column")
	return c
}

// args is the command's own command line (cmdArgs), also when run in-process by `agbench run`.
func runReadahead(ctx context.Context, a *app, f *readaheadFlags, args []string) error {
	r := f.r
	r.Config.Progress = a.stderr
	if f.Cluster != "" {
		topo, err := cluster.Load(home(a), f.Cluster)
		if err != nil {
			return err
		}
		r.Topo = topo
	}
	out, err := experiment.Run(ctx, r, experiment.Setup{Version: version, Args: args, Results: f.Results, Events: func(e experiment.Event) {
		if _, ok := e.(experiment.PrivateServer); ok {
			fmt.Fprintln(a.stderr, "making a private throwaway server")
		}
	}})
	if out == nil {
		return err
	}
	render.Readahead(a.stdout, r.Conditions, r.Rows, out.Result.Warnings)
	if out.Path != "" {
		fmt.Fprintf(a.stdout, "\nresult: %s\n", filepath.Dir(out.Path))
	}
	return err
}
