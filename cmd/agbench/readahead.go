package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/workload/readahead"
)

func init() { register(newReadaheadCmd) }

type readaheadFlags struct {
	cluster, pgBin, out string
	cfg                 readahead.Config
}

func newReadaheadCmd(a *app) *cobra.Command {
	var f readaheadFlags
	c := &cobra.Command{
		Use:   "readahead",
		Short: "Cold-cache prefetch experiment: the read-ahead article's queries with prefetch off and on",
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
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runReadahead(cmd.Context(), a, &f, cmdArgs(cmd))
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.cluster, "cluster", "", "run on this agbench cluster's primary")
	fl.StringVar(&f.pgBin, "pg-bin", "", "run on a private throwaway server of these binaries (default: installed PostgreSQL)")
	fl.StringVar(&f.out, "out", "results", "folder of result folders")
	fl.Int64Var(&f.cfg.Rows, "rows", readahead.DefaultRows, "rows of each table")
	fl.Int64Var(&f.cfg.RangeIDs, "range-ids", 0, fmt.Sprintf("range scan bound: id < N (default %d, or --rows when fewer)", readahead.DefaultRangeIDs))
	fl.Int64Var(&f.cfg.JoinIDs, "join-ids", 0, fmt.Sprintf("join bound: id < N (default %d)", readahead.DefaultJoinIDs))
	fl.IntVar(&f.cfg.Repeat, "repeat", readahead.DefaultRepeat, "runs of each query and side (medians are reported)")
	fl.StringSliceVar(&f.cfg.Queries, "queries", readahead.QueryNames, "queries to run")
	fl.StringVar(&f.cfg.Device, "device", readahead.DeviceAuto, "auto (a private loop device when root) or none")
	fl.IntVar(&f.cfg.ReadAheadKB, "read-ahead-kb", readahead.DefaultReadAheadKB, "the device's read_ahead_kb with prefetch on")
	fl.IntVar(&f.cfg.IOConcurrency, "io-concurrency", readahead.DefaultIOConcurrency, "effective_io_concurrency with prefetch on")
	fl.IntVar(&f.cfg.ThrottleIOPS, "throttle-iops", 0, "limit the private device to N reads per second (storage under pressure)")
	fl.BoolVar(&f.cfg.DropCaches, "drop-caches", false, "also drop the whole OS page cache before each cold run (global!)")
	fl.Int64Var(&f.cfg.Seed, "seed", 1, "seed of the tables' random column")
	return c
}

func (f *readaheadFlags) validate() error {
	if f.cfg.RangeIDs == 0 {
		f.cfg.RangeIDs = min(readahead.DefaultRangeIDs, max(f.cfg.Rows, 1))
	}
	if f.cfg.JoinIDs == 0 {
		f.cfg.JoinIDs = min(readahead.DefaultJoinIDs, max(f.cfg.Rows, 1))
	}
	errs := []error{f.cfg.Validate()}
	if f.cluster != "" && f.pgBin != "" {
		errs = append(errs, agerr.BadInputf("--cluster and --pg-bin: give one (an existing cluster, or binaries for a private server)"))
	}
	if f.cluster != "" {
		errs = append(errs, cluster.CheckName(f.cluster))
	}
	if f.out == "" {
		errs = append(errs, agerr.BadInputf("--out: want a folder"))
	}
	return agerr.Join(errs...)
}

// args is the command's own command line (cmdArgs), also when run in-process by `agbench run`.
func runReadahead(ctx context.Context, a *app, f *readaheadFlags, args []string) (err error) {
	if err := f.validate(); err != nil {
		return err
	}
	res := result.New("readahead", version, args)
	var topo *cluster.Topology
	if f.cluster != "" {
		if topo, err = cluster.Load(home(a), f.cluster); err != nil {
			return err
		}
		unlock, err := topo.Lock()
		if err != nil {
			return err
		}
		defer unlock()
		res.Meta.Topology = &result.Topology{Cluster: topo.Name, Commit: topo.Commit}
	} else {
		fmt.Fprintln(a.stderr, "making a private throwaway server")
		var destroy func() error
		if topo, destroy, err = privateServer(ctx, f.pgBin); err != nil {
			return err
		}
		defer func() { err = errors.Join(err, destroy()) }()
	}
	p := topo.Primary()
	res.Meta.Topology = cmpOr(res.Meta.Topology, &result.Topology{})
	res.Meta.Topology.Nodes = []result.Node{{Name: p.Name, Role: p.Role, Addr: fmt.Sprintf("%s:%d", p.Host, p.Port)}}
	cfg := f.cfg
	cfg.Progress = a.stderr
	e, err := readahead.Setup(ctx, topoServer{topo}, cfg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, e.Close()) }()
	cond := e.Conditions()
	cfg = e.Config()
	res.Meta.Seed = cfg.Seed
	res.Meta.Server = &result.Server{Version: cond.ServerVersion, VersionNum: cond.VersionNum}
	res.Meta.Config = map[string]any{
		"rows": cfg.Rows, "range_ids": cfg.RangeIDs, "join_ids": cfg.JoinIDs, "repeat": cfg.Repeat, "queries": cfg.Queries,
		"device": cfg.Device, "read_ahead_kb": cfg.ReadAheadKB, "io_concurrency": cfg.IOConcurrency,
		"throttle_iops": cfg.ThrottleIOPS, "drop_caches": cfg.DropCaches, "cluster": f.cluster, "pg_bin": topo.PG.BinDir,
	}
	dir := result.RunDir(f.out, res.Meta.Started, "readahead")
	queries := readahead.Queries(cfg.RangeIDs, cfg.JoinIDs)
	save := func(ms []readahead.Measurement, runErr error) error {
		res.Steps = res.Steps[:0]
		for i, m := range ms {
			point := 0
			for j, q := range queries {
				if q.Name == m.Query {
					point = j
				}
			}
			s, err := m.Step(i, point)
			if err != nil {
				return err
			}
			res.Steps = append(res.Steps, s)
		}
		extra, err := json.Marshal(readahead.RunExtra{Conditions: cond, Table: readahead.Summarize(queries, ms)})
		if err != nil {
			return err
		}
		res.Extra = map[string]json.RawMessage{readahead.ExtraKey: extra}
		res.Warnings = runWarnings(cond, ms)
		res.Finish(runErr)
		_, err = result.Write(dir, res)
		return err
	}
	var ms []readahead.Measurement
	ms, runErr := e.RunAll(ctx, func(m readahead.Measurement) {
		ms = append(ms, m)
		_ = save(ms, errors.New("running"))
	})
	if err := save(ms, runErr); err != nil {
		return errors.Join(runErr, err)
	}
	printReadahead(a.stdout, cond, readahead.Summarize(queries, ms), res.Warnings)
	fmt.Fprintf(a.stdout, "\nresult: %s\n", dir)
	return runErr
}

func cmpOr[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}

func runWarnings(cond readahead.Conditions, ms []readahead.Measurement) []string {
	var w []string
	warm, wrongPlan := 0, 0
	for _, m := range ms {
		if m.ColdAsked && !m.Cold {
			warm++
		}
		if !m.NodeOK {
			wrongPlan++
		}
	}
	if warm > 0 {
		w = append(w, fmt.Sprintf("%d of %d runs read nothing from storage: they were warm, not cold", warm, len(ms)))
	}
	if wrongPlan > 0 {
		w = append(w, fmt.Sprintf("%d of %d runs did not use the intended plan node", wrongPlan, len(ms)))
	}
	w = append(w, cond.Notes...)
	return w
}

func printReadahead(w io.Writer, c readahead.Conditions, rows []readahead.Row, warnings []string) {
	var rels []string
	for _, name := range []string{readahead.Table1, readahead.Table2} {
		rels = append(rels, fmt.Sprintf("%s %.0f MB", name, float64(c.Relations[name])/1e6))
	}
	fmt.Fprintf(w, "readahead · PostgreSQL %s · %d rows (%s)\n", c.ServerVersion, c.Rows, strings.Join(rels, ", "))
	fmt.Fprintf(w, "cold:          %s\n", c.ColdMethod)
	fmt.Fprintf(w, "device:        %s\n", c.Device)
	if c.Throttle != "" {
		fmt.Fprintf(w, "throttle:      %s\n", c.Throttle)
	}
	fmt.Fprintf(w, "prefetch off:  %s\nprefetch on:   %s\n", c.PrefetchOff, c.PrefetchOn)
	fmt.Fprintf(w, "sequential:    %s\nIO ops from:   %s\n\n", c.SequentialPrefetch, c.IOSource)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "QUERY\tPLAN NODE\tPREFETCH\tELAPSED ms\tHITS\tREADS\tIO OPS\tAVG IO kB\tIO READ ms\tDEVICE ms\tCOLD RUNS\tOFF/ON\t")
	for _, r := range rows {
		for i, side := range []readahead.Figures{r.Off, r.On} {
			q, node, name, ratio := "", "", "off", ""
			if i == 0 {
				q, node = r.Title, r.Node
				if !r.Off.NodeOK || !r.On.NodeOK {
					node += " (NOT ALWAYS)"
				}
			} else {
				name = "on"
				if r.Ratio > 0 {
					ratio = fmt.Sprintf("%.1fx", r.Ratio)
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f\t%.0f\t%.0f\t%.0f\t%.1f\t%.1f\t%s\t%d/%d\t%s\t\n", q, node, name, side.ElapsedMs,
				side.SharedHit, side.Read, side.IOOps, side.AvgIOKB, side.IOReadMs, devMs(c, side), side.Cold, side.Runs, ratio)
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "medians; HITS = shared buffer hits (logical reads), READS = pages read from storage (physical reads),")
	fmt.Fprintln(w, "IO READ ms = PostgreSQL's read time (track_io_timing), DEVICE ms = the device's own (/proc/diskstats; summed over concurrent IOs)")
	for _, s := range warnings {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
}

// devMs is the device's read time, or "-" when the device is shared with other processes.
func devMs(c readahead.Conditions, f readahead.Figures) string {
	if c.DeviceName == "" {
		return "-"
	}
	return fmt.Sprintf("%.1f", f.DeviceMs)
}

// topoServer is readahead.Server over a cluster's primary.
type topoServer struct{ t *cluster.Topology }

func (s topoServer) Connect(ctx context.Context, db string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(s.t.ConnString(s.t.Primary(), db))
	if err != nil {
		return nil, err
	}
	cfg.ConnectTimeout = 10 * time.Second
	return pgx.ConnectConfig(ctx, cfg)
}

func (s topoServer) Restart(ctx context.Context) error {
	name := s.t.Primary().Name
	if err := s.t.StopNode(ctx, name); err != nil {
		return err
	}
	return s.t.StartNode(ctx, name)
}

func (s topoServer) DataDir() string    { return s.t.Primary().DataDir }
func (s topoServer) OSUser() (int, int) { return s.t.OSUser.UID, s.t.OSUser.GID }
func (s topoServer) HasStandbys() bool  { return len(s.t.Standbys()) > 0 }

// privateServer makes a lone primary in a temporary agbench home on a free loopback port,
// and returns the function that destroys it and the home.
func privateServer(ctx context.Context, pgBin string) (*cluster.Topology, func() error, error) {
	home, err := os.MkdirTemp("", "agbench-readahead-home-")
	if err != nil {
		return nil, nil, err
	}
	if err := os.Chmod(home, 0o755); err != nil {
		os.RemoveAll(home)
		return nil, nil, err
	}
	var topo *cluster.Topology
	for attempt := 0; attempt < 5; attempt++ {
		port, perr := freePort()
		if perr != nil {
			err = perr
			break
		}
		topo, err = cluster.Create(ctx, cluster.CreateOptions{
			Home: home, Name: "readahead", Commit: cluster.CommitAsync, BasePort: port, PGBin: pgBin,
			Settings: []string{"fsync=off", "autovacuum=off"},
		})
		if err == nil || !strings.Contains(err.Error(), "in use") {
			break
		}
	}
	if err != nil {
		os.RemoveAll(home)
		return nil, nil, err
	}
	return topo, func() error {
		c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		return errors.Join(topo.Destroy(c), os.RemoveAll(home))
	}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
