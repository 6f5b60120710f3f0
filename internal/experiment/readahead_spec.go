package experiment

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/workload/readahead"
)

// ReadaheadSettings are a read-ahead run's settings as a command line gives them.
type ReadaheadSettings struct {
	// Cluster names an agbench cluster to run on; PGBin the binaries of a private server
	// instead ("" for the installed PostgreSQL).
	Cluster, PGBin string
	// Results is the folder of result folders; Out is its old spelling, which wins when given.
	Results, Out string
	Config       readahead.Config
}

func init() {
	Register(Meta{Name: readahead.Name, Description: "Cold-cache prefetch experiment: the read-ahead article's queries with prefetch off and on",
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
		Flags: func(fs *pflag.FlagSet) Builder {
			s := &ReadaheadSettings{}
			s.register(fs)
			return func([]string) (Experiment, error) { return s.Spec() }
		}})
}

// register declares the experiment's flags on fs, with their defaults and help.
func (s *ReadaheadSettings) register(fs *pflag.FlagSet) {
	fs.StringVar(&s.Cluster, "cluster", "", "run on this agbench cluster's primary")
	fs.StringVar(&s.PGBin, "pg-bin", "", "run on a private throwaway server of these binaries (default: installed PostgreSQL)")
	fs.StringVar(&s.Results, "results", "results", "folder for results/<time>-readahead/result.json")
	fs.StringVar(&s.Out, "out", "", "old spelling of --results")
	_ = fs.MarkHidden("out")
	fs.Int64Var(&s.Config.Rows, "rows", readahead.DefaultRows, "rows of each table")
	fs.Int64Var(&s.Config.RangeIDs, "range-ids", 0, fmt.Sprintf("range scan bound: id < N (default %d, or --rows when fewer)", readahead.DefaultRangeIDs))
	fs.Int64Var(&s.Config.JoinIDs, "join-ids", 0, fmt.Sprintf("join bound: id < N (default %d)", readahead.DefaultJoinIDs))
	fs.IntVar(&s.Config.Repeat, "repeat", readahead.DefaultRepeat, "runs of each query and side (medians are reported)")
	fs.StringSliceVar(&s.Config.Queries, "queries", readahead.QueryNames, "queries to run")
	fs.StringVar(&s.Config.Device, "device", readahead.DeviceAuto, "auto (a private loop device when root) or none")
	fs.IntVar(&s.Config.ReadAheadKB, "read-ahead-kb", readahead.DefaultReadAheadKB, "the device's read_ahead_kb with prefetch on")
	fs.IntVar(&s.Config.IOConcurrency, "io-concurrency", readahead.DefaultIOConcurrency, "effective_io_concurrency with prefetch on")
	fs.IntVar(&s.Config.ThrottleIOPS, "throttle-iops", 0, "limit the private device to N reads per second (storage under pressure)")
	fs.BoolVar(&s.Config.DropCaches, "drop-caches", false, "also drop the whole OS page cache before each cold run (global!)")
	fs.Int64Var(&s.Config.Seed, "seed", 1, "seed of the tables' random column")
}

// Spec checks the settings, every problem at once and without reading the cluster, and
// makes the experiment (its Run opens the cluster, if one is named); it fills the query
// bounds not given and settles Results.
func (s *ReadaheadSettings) Spec() (*Readahead, error) {
	cfg := &s.Config
	if cfg.RangeIDs == 0 {
		cfg.RangeIDs = min(readahead.DefaultRangeIDs, max(cfg.Rows, 1))
	}
	if cfg.JoinIDs == 0 {
		cfg.JoinIDs = min(readahead.DefaultJoinIDs, max(cfg.Rows, 1))
	}
	errs := []error{cfg.Validate()}
	if s.Cluster != "" && s.PGBin != "" {
		errs = append(errs, errClusterAndPGBin())
	}
	if s.Cluster != "" {
		errs = append(errs, cluster.CheckName(s.Cluster))
	}
	if s.Out != "" {
		s.Results = s.Out
	}
	if s.Results == "" {
		errs = append(errs, agerr.BadInputf("--results: want a folder"))
	}
	if err := agerr.Join(errs...); err != nil {
		return nil, err
	}
	return &Readahead{Cluster: s.Cluster, PGBin: s.PGBin, Config: s.Config}, nil
}
