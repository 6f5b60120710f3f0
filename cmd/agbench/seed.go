package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/render"
	"github.com/agbench/agbench/internal/seed"
	"github.com/agbench/agbench/internal/units"
)

func init() { registerKind("seed", newSeedCmd) }

// seedFlags are the flags of `agbench seed` as given, before validation.
type seedFlags struct {
	cluster, method, compress, maxRate, name, lag, backupDir, initSize, results string
	sync, async, keepBackup, initOnly, noWire                                   bool
	retries, repeat                                                             int
	catchUp                                                                     time.Duration
	compare                                                                     []string

	s *experiment.Seed // the seeding check made
}

func newSeedCmd(a *app) *cobra.Command {
	f := &seedFlags{}
	c := &cobra.Command{
		Use: "seed",
		Annotations: map[string]string{noConnStrings: "seed makes a standby's data folder and starts its server on this machine, " +
			"and joins it to the topology of an agbench cluster (--cluster NAME); for a cluster made by hand, add a standby with pg_basebackup -R"},
		Long: `Add a standby to a local cluster the way an availability group adds a replica
(reference/ag-direct-seeding-2016), and time it:

  direct          pg_basebackup streams the primary's files into the new data folder,
                  WAL streamed beside them through the new standby's replication slot
  backup-restore  pg_basebackup writes a tar backup into a backup folder, then agbench
                  extracts it into the new data folder

then the new standby is flushed to disk, started, caught up (replay lag under
--lag-threshold) and joined to the topology. --compress compresses on the server
(PostgreSQL 15+: gzip, lz4, zstd, optionally :level), as SQL Server's trace flag 9567.

Phases (checkpoint, transfer or backup+restore, sync, start, catch-up, join) are
timed apart, with the CPU of the primary's walsender and of the receiver, device
bytes, bytes on the wire and the compression ratio. Progress shows bytes of the
server's estimate, rate, time left and what the walsender waits on.

--compare method=direct,backup-restore compress=none,lz4,zstd seeds every variant
on the same database, dropping each added standby again, and prints the article's
table (phase | duration per variant). --init-size 2G first grows the database to
about that size with data that is about 28% random bytes and 72% repetitive text.

A seeding that fails or is interrupted removes the half-made standby and its slot
and records why in the history (agbench seed history).`,
		Args: func(c *cobra.Command, args []string) error {
			for _, x := range args {
				if !strings.Contains(x, "=") || len(f.compare) == 0 {
					return agerr.BadInputf("%s: unexpected argument %q (compare keys go after --compare: --compare method=a,b compress=x,y)", c.CommandPath(), x)
				}
			}
			return nil
		},
		PreRunE: func(_ *cobra.Command, args []string) error { return f.check(args) },
		RunE:    func(cmd *cobra.Command, _ []string) error { return runSeed(cmd, a, f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.cluster, "cluster", "lab", "cluster made by agbench cluster create")
	fl.StringVar(&f.method, "method", seed.MethodDirect, "direct or backup-restore")
	fl.StringVar(&f.compress, "compress", "none", "server-side compression: none, gzip, lz4, zstd, with :level (zstd:3)")
	fl.StringVar(&f.maxRate, "max-rate", "", "limit the transfer, bytes per second (32k to 1024M), as pg_basebackup --max-rate")
	fl.StringVar(&f.name, "name", "", "name of the new standby (default: the first free standbyN)")
	fl.BoolVar(&f.sync, "sync", false, "wait until the primary counts the new standby as synchronous (a --commit sync cluster)")
	fl.BoolVar(&f.async, "async", false, "do not wait for synchronous state (the default)")
	fl.StringVar(&f.lag, "lag-threshold", "16M", "replay lag under which the new standby has caught up")
	fl.DurationVar(&f.catchUp, "catchup-timeout", seed.DefaultCatchUpTimeout, "how long the new standby may take to stream and catch up")
	fl.StringVar(&f.backupDir, "backup-dir", "", "folder for backups of backup-restore (default: the cluster's backups/)")
	fl.BoolVar(&f.keepBackup, "keep-backup", false, "keep the backup after restoring it")
	fl.IntVar(&f.retries, "retries", 0, "try a failed transfer again this many times")
	fl.StringVar(&f.initSize, "init-size", "", "first grow the database to about this size (e.g. 2G) with partly compressible data")
	fl.BoolVar(&f.initOnly, "init-only", false, "with --init-size: only make the data, do not seed")
	fl.StringArrayVar(&f.compare, "compare", nil, "compare variants: method=direct,backup-restore and/or compress=none,lz4,zstd")
	fl.IntVar(&f.repeat, "repeat", 1, "with --compare: seed every variant this many times, round after round (the table shows medians)")
	fl.BoolVar(&f.noWire, "no-wire-meter", false, "connect pg_basebackup to the primary directly, not through agbench's counting relay (bytes on the wire unknown)")
	fl.StringVar(&f.results, "results", "results", "folder for results/<time>-seed/result.json")
	c.AddCommand(seedHistoryCmd(a), seedDropCmd(a))
	return c
}

// seedOptions validates the flags into options and compare variants, reporting every problem.
func seedOptions(f *seedFlags) (seed.Options, []seed.Variant, int64, error) {
	var errs []error
	o := seed.Options{Method: f.method, Name: f.name, Sync: f.sync, CatchUpTimeout: f.catchUp, BackupDir: f.backupDir,
		KeepBackup: f.keepBackup, Retries: f.retries, NoWireMeter: f.noWire}
	var err error
	if o.Compress, err = seed.ParseCompression(f.compress); err != nil {
		errs = append(errs, err)
	}
	if f.maxRate != "" {
		if o.MaxRate, err = units.ParseBytesFraction(f.maxRate); err != nil {
			errs = append(errs, agerr.BadInputf("--max-rate: %v", err))
		}
	}
	if o.LagThreshold, err = units.ParseBytesFraction(f.lag); err != nil {
		errs = append(errs, agerr.BadInputf("--lag-threshold: %v", err))
	}
	if f.sync && f.async {
		errs = append(errs, agerr.BadInputf("--sync and --async: choose one"))
	}
	if f.catchUp <= 0 {
		errs = append(errs, agerr.BadInputf("--catchup-timeout %v: must be positive", f.catchUp))
	}
	var size int64
	if f.initSize != "" {
		if size, err = units.ParseBytesFraction(f.initSize); err != nil || size < 16<<20 {
			errs = append(errs, agerr.BadInputf("--init-size %q: want a size of 16M or more (e.g. 2G)", f.initSize))
		}
	} else if f.initOnly {
		errs = append(errs, agerr.BadInputf("--init-only needs --init-size"))
	}
	if f.repeat < 1 || f.repeat > 20 {
		errs = append(errs, agerr.BadInputf("--repeat %d: want 1 to 20", f.repeat))
	}
	var variants []seed.Variant
	if len(f.compare) > 0 {
		variants, err = seed.ParseCompare(f.compare, seed.Variant{Method: o.Method, Compress: o.Compress})
		errs = append(errs, err)
	} else if f.repeat > 1 {
		errs = append(errs, agerr.BadInputf("--repeat needs --compare"))
	}
	if o.Method != seed.MethodDirect && o.Method != seed.MethodBackupRestore {
		errs = append(errs, agerr.BadInputf("--method %q: want direct or backup-restore", o.Method))
	}
	return o, variants, size, agerr.Join(errs...)
}

// check validates the command line (compare keys may follow --compare as arguments)
// without reading the cluster (cobra's PreRunE, and a plan's check) and makes the seeding.
func (f *seedFlags) check(args []string) error {
	f.compare = append(f.compare, args...)
	o, variants, initSize, err := seedOptions(f)
	if err != nil {
		return err
	}
	f.s = &experiment.Seed{Options: o, Variants: variants, Repeat: f.repeat, InitSize: initSize}
	return cluster.CheckName(f.cluster)
}

func runSeed(cmd *cobra.Command, a *app, f *seedFlags) error {
	s, initSize := f.s, f.s.InitSize
	topo, err := loadCluster(a, f.cluster)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if initSize > 0 {
		if err := seedInit(ctx, a, topo, initSize); err != nil {
			return err
		}
		if f.initOnly {
			return nil
		}
	}
	s.Topo = topo
	var show *seedProgress
	out, runErr := experiment.Run(ctx, s, setup(cmd, f.results, func(e experiment.Event) {
		switch e := e.(type) {
		case experiment.SeedBegin:
			if e.Compare {
				fmt.Fprintf(a.stderr, "seeding %s\n", e.Run)
			}
			show = newSeedProgress(a)
		case seed.Progress:
			show.update(e)
		case experiment.SeedEnded:
			show.done()
			if e.Err == nil && !e.Compare {
				render.Seeding(a.stdout, &e.Report.Seeding)
			}
		}
	}))
	if out == nil || len(out.Result.Steps) == 0 && runErr != nil {
		return runErr
	}
	if s.Compare() {
		render.SeedCompare(a.stdout, out.Result, seed.Labels(s.All()))
	}
	if out.Path != "" {
		fmt.Fprintf(a.stdout, "\nresult: %s\n", out.Path)
	}
	return runErr
}

func seedInit(ctx context.Context, a *app, topo *cluster.Topology, size int64) error {
	start := time.Now()
	var last time.Time
	got, err := seed.InitData(ctx, topo, size, func(done, target int64) {
		if time.Since(last) > 5*time.Second || done >= target {
			fmt.Fprintf(a.stderr, "init: database %s of %s\n", units.FormatBytesShort(done), units.FormatBytesShort(target))
			last = time.Now()
		}
	})
	if err != nil {
		return fmt.Errorf("--init-size: %w", err)
	}
	fmt.Fprintf(a.stdout, "database %s is %s (table %s: %.0f%% random bytes, the rest repetitive text), made in %.1fs\n",
		topo.Database, units.FormatBytesShort(got), seed.DataTable, seed.RandomShare*100, time.Since(start).Seconds())
	return nil
}

// seedProgress shows progress: a bar per phase on a terminal, a line every few seconds otherwise.
type seedProgress struct {
	a     *app
	mu    sync.Mutex
	bar   *progressbar.ProgressBar
	phase string
	last  time.Time
}

// progressLineEvery is how often plain progress lines are written.
const progressLineEvery = 2 * time.Second

func newSeedProgress(a *app) *seedProgress { return &seedProgress{a: a} }

func (s *seedProgress) update(p seed.Progress) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.Phase != s.phase {
		s.finishBar()
		s.phase = p.Phase
		if !s.a.interactive {
			fmt.Fprintf(s.a.stderr, "%8.1fs  %s\n", p.Elapsed.Seconds(), p.Phase)
			s.last = time.Now()
			return
		}
	}
	desc := progressDetail(p)
	if s.a.interactive && p.Total > 0 {
		if s.bar == nil {
			s.bar = progressbar.NewOptions64(p.Total, progressbar.OptionSetWriter(s.a.stdout), progressbar.OptionShowBytes(true),
				progressbar.OptionSetWidth(30), progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionShowCount())
		}
		if s.bar.GetMax64() < p.Total {
			s.bar.ChangeMax64(p.Total)
		}
		s.bar.Describe(fmt.Sprintf("%-9s %s", p.Phase, desc))
		s.bar.Set64(min(p.Done, p.Total))
		return
	}
	if time.Since(s.last) < progressLineEvery {
		return
	}
	s.last = time.Now()
	w := s.a.stderr
	if s.a.interactive {
		w = s.a.stdout
	}
	switch {
	case p.Total > 0:
		eta := "?"
		if p.ETA >= 0 {
			eta = p.ETA.Round(time.Second).String()
		}
		fmt.Fprintf(w, "%8.1fs  %-9s %s of %s (%.0f%%)  %.1f MB/s  ETA %s  %s\n", p.Elapsed.Seconds(), p.Phase,
			units.FormatBytesShort(p.Done), units.FormatBytesShort(p.Total), 100*float64(p.Done)/float64(p.Total), p.Rate/1e6, eta, desc)
	case p.Phase == seed.PhaseCatchUp:
		lag := "not reported yet"
		if p.LagBytes != nil {
			lag = units.FormatBytesShort(*p.LagBytes)
		}
		fmt.Fprintf(w, "%8.1fs  %-9s %s  replay lag %s\n", p.Elapsed.Seconds(), p.Phase, p.ServerPhase, lag)
	default:
		fmt.Fprintf(w, "%8.1fs  %-9s %s\n", p.Elapsed.Seconds(), p.Phase, p.ServerPhase)
	}
}

func progressDetail(p seed.Progress) string {
	var parts []string
	if p.Wait != "" {
		parts = append(parts, "waits on "+p.Wait)
	}
	if p.Device != "" {
		parts = append(parts, fmt.Sprintf("%s %.0f%% busy", p.Device, p.DiskUtil*100))
	}
	if p.SenderCores > 0 || p.ReceiverCores > 0 {
		parts = append(parts, fmt.Sprintf("CPU sender %.2f receiver %.2f", p.SenderCores, p.ReceiverCores))
	}
	if p.WireBytes > 0 {
		parts = append(parts, "wire "+units.FormatBytesShort(p.WireBytes))
	}
	return strings.Join(parts, ", ")
}

func (s *seedProgress) finishBar() {
	if s.bar != nil {
		s.bar.Finish()
		fmt.Fprintln(s.a.stdout)
		s.bar = nil
	}
}

func (s *seedProgress) done() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finishBar()
}

func seedHistoryCmd(a *app) *cobra.Command {
	var name string
	var asJSON bool
	c := &cobra.Command{
		Use:   "history",
		Short: "Every seeding of a cluster: start, end, method, compression, size, rate, state, failure reason, attempts",
		Long: `Every seeding of the cluster, oldest first, like sys.dm_hadr_automatic_seeding: start
and end, method, compression, size streamed, bytes on the wire, rate, state (seeding,
completed, failed, interrupted, removed), failure reason and attempts.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			topo, err := loadCluster(a, name)
			if err != nil {
				return err
			}
			recs, err := seed.History(topo.Dir)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				if recs == nil {
					recs = []seed.Record{}
				}
				return enc.Encode(recs)
			}
			if len(recs) == 0 {
				fmt.Fprintf(a.stdout, "no seeding on cluster %s yet\n", topo.Name)
				return nil
			}
			render.SeedHistory(a.stdout, recs)
			return nil
		},
	}
	c.Flags().StringVar(&name, "cluster", "lab", "cluster name")
	c.Flags().BoolVar(&asJSON, "json", false, "print the records as JSON")
	return c
}

func seedDropCmd(a *app) *cobra.Command {
	var clusterName, name string
	c := &cobra.Command{
		Use:   "drop",
		Short: "Remove a standby: stop it, drop its slot, delete its data folder, take it out of the topology",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			topo, err := loadCluster(a, clusterName)
			if err != nil {
				return err
			}
			if name == "" {
				return agerr.BadInputf("--name: which standby to drop (nodes: %s)", strings.Join(topo.NodeNames(), ", "))
			}
			if err := seed.Drop(cmd.Context(), topo, name); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "dropped %s from cluster %s\n", name, topo.Name)
			return nil
		},
	}
	c.Flags().StringVar(&clusterName, "cluster", "lab", "cluster name")
	c.Flags().StringVar(&name, "name", "", "standby to drop")
	return c
}
