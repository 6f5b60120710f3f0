package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/live"
	"github.com/agbench/agbench/internal/render"
	"github.com/agbench/agbench/internal/seed"
)

func init() { registerKind("seed", newSeedCmd) }

// seedFlags are the flags of `agbench seed` as given, before validation.
type seedFlags struct {
	experiment.SeedSettings
	results string

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
				if !strings.Contains(x, "=") || len(f.Compare) == 0 {
					return agerr.BadInputf("%s: unexpected argument %q (compare keys go after --compare: --compare method=a,b compress=x,y)", c.CommandPath(), x)
				}
			}
			return nil
		},
		PreRunE: func(_ *cobra.Command, args []string) error { return f.check(args) },
		RunE:    func(cmd *cobra.Command, _ []string) error { return runSeed(cmd, a, f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.Cluster, "cluster", "lab", "cluster made by agbench cluster create")
	fl.StringVar(&f.Method, "method", seed.MethodDirect, "direct or backup-restore")
	fl.StringVar(&f.Compress, "compress", "none", "server-side compression: none, gzip, lz4, zstd, with :level (zstd:3)")
	fl.StringVar(&f.MaxRate, "max-rate", "", "limit the transfer, bytes per second (32k to 1024M), as pg_basebackup --max-rate")
	fl.StringVar(&f.Name, "name", "", "name of the new standby (default: the first free standbyN)")
	fl.BoolVar(&f.Sync, "sync", false, "wait until the primary counts the new standby as synchronous (a --commit sync cluster)")
	fl.BoolVar(&f.Async, "async", false, "do not wait for synchronous state (the default)")
	fl.StringVar(&f.LagThreshold, "lag-threshold", "16M", "replay lag under which the new standby has caught up")
	fl.DurationVar(&f.CatchUpTimeout, "catchup-timeout", seed.DefaultCatchUpTimeout, "how long the new standby may take to stream and catch up")
	fl.StringVar(&f.BackupDir, "backup-dir", "", "folder for backups of backup-restore (default: the cluster's backups/)")
	fl.BoolVar(&f.KeepBackup, "keep-backup", false, "keep the backup after restoring it")
	fl.IntVar(&f.Retries, "retries", 0, "try a failed transfer again this many times")
	fl.StringVar(&f.InitSize, "init-size", "", "first grow the database to about this size (e.g. 2G) with partly compressible data")
	fl.BoolVar(&f.InitOnly, "init-only", false, "with --init-size: only make the data, do not seed")
	fl.StringArrayVar(&f.Compare, "compare", nil, "compare variants: method=direct,backup-restore and/or compress=none,lz4,zstd")
	fl.IntVar(&f.Repeat, "repeat", 1, "with --compare: seed every variant this many times, round after round (the table shows medians)")
	fl.BoolVar(&f.NoWireMeter, "no-wire-meter", false, "connect pg_basebackup to the primary directly, not through agbench's counting relay (bytes on the wire unknown)")
	fl.StringVar(&f.results, "results", "results", "folder for results/<time>-seed/result.json")
	c.AddCommand(seedHistoryCmd(a), seedDropCmd(a))
	return c
}

// check validates the command line (compare keys may follow --compare as arguments)
// without reading the cluster (cobra's PreRunE, and a plan's check) and makes the seeding.
func (f *seedFlags) check(args []string) error {
	f.Compare = append(f.Compare, args...)
	var err error
	f.s, err = f.Spec()
	return err
}

func runSeed(cmd *cobra.Command, a *app, f *seedFlags) error {
	s := f.s
	topo, err := loadCluster(a, f.Cluster)
	if err != nil {
		return err
	}
	s.Topo = topo
	show := &live.Seed{Stdout: a.stdout, Stderr: a.stderr, Interactive: a.interactive}
	out, runErr := experiment.Run(cmd.Context(), s, setup(cmd, f.results, func(e experiment.Event) {
		show.Event(e)
		if e, ok := e.(experiment.SeedEnded); ok && e.Err == nil && !e.Compare {
			render.Seeding(a.stdout, &e.Report.Seeding)
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
