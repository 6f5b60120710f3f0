package experiment

import (
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/seed"
	"github.com/agbench/agbench/internal/units"
)

// SeedSettings are a seeding's settings as a command line gives them: sizes and the
// compression as text, comparisons as key=a,b.
type SeedSettings struct {
	// Cluster names the agbench cluster to seed a standby into.
	Cluster                                                 string
	Method, Compress, MaxRate, Name, LagThreshold, InitSize string
	BackupDir                                               string
	Sync, Async, KeepBackup, InitOnly, NoWireMeter          bool
	Retries, Repeat                                         int
	CatchUpTimeout                                          time.Duration
	Compare                                                 []string
	// Results is the folder of result folders (the run's Setup).
	Results string
}

func init() {
	Register(Meta{Name: "seed", Description: "Add a standby by direct seeding or by backup and restore, timed phase by phase",
		Use: "seed",
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
		Flags: func(fs *pflag.FlagSet) Builder {
			s := &SeedSettings{}
			s.register(fs)
			return s.build
		}})
}

// register declares the seeding's flags on fs, with their defaults and help.
func (s *SeedSettings) register(fs *pflag.FlagSet) {
	fs.StringVar(&s.Cluster, "cluster", "lab", "cluster made by agbench cluster create")
	fs.StringVar(&s.Method, "method", seed.MethodDirect, "direct or backup-restore")
	fs.StringVar(&s.Compress, "compress", "none", "server-side compression: none, gzip, lz4, zstd, with :level (zstd:3)")
	fs.StringVar(&s.MaxRate, "max-rate", "", "limit the transfer, bytes per second (32k to 1024M), as pg_basebackup --max-rate")
	fs.StringVar(&s.Name, "name", "", "name of the new standby (default: the first free standbyN)")
	fs.BoolVar(&s.Sync, "sync", false, "wait until the primary counts the new standby as synchronous (a --commit sync cluster)")
	fs.BoolVar(&s.Async, "async", false, "do not wait for synchronous state (the default)")
	fs.StringVar(&s.LagThreshold, "lag-threshold", "16M", "replay lag under which the new standby has caught up")
	fs.DurationVar(&s.CatchUpTimeout, "catchup-timeout", seed.DefaultCatchUpTimeout, "how long the new standby may take to stream and catch up")
	fs.StringVar(&s.BackupDir, "backup-dir", "", "folder for backups of backup-restore (default: the cluster's backups/)")
	fs.BoolVar(&s.KeepBackup, "keep-backup", false, "keep the backup after restoring it")
	fs.IntVar(&s.Retries, "retries", 0, "try a failed transfer again this many times")
	fs.StringVar(&s.InitSize, "init-size", "", "first grow the database to about this size (e.g. 2G) with partly compressible data")
	fs.BoolVar(&s.InitOnly, "init-only", false, "with --init-size: only make the data, do not seed")
	fs.StringArrayVar(&s.Compare, "compare", nil, "compare variants: method=direct,backup-restore and/or compress=none,lz4,zstd")
	fs.IntVar(&s.Repeat, "repeat", 1, "with --compare: seed every variant this many times, round after round (the table shows medians)")
	fs.BoolVar(&s.NoWireMeter, "no-wire-meter", false, "connect pg_basebackup to the primary directly, not through agbench's counting relay (bytes on the wire unknown)")
	fs.StringVar(&s.Results, "results", "results", "folder for results/<time>-seed/result.json")
}

// build makes the seeding from the parsed flags; compare keys may follow --compare as
// arguments (--compare method=a,b compress=x,y), and no other argument is taken.
func (s *SeedSettings) build(args []string) (Experiment, error) {
	for _, x := range args {
		if !strings.Contains(x, "=") || len(s.Compare) == 0 {
			return nil, agerr.BadInputf("agbench seed: unexpected argument %q (compare keys go after --compare: --compare method=a,b compress=x,y)", x)
		}
	}
	s.Compare = append(s.Compare, args...)
	return s.Spec()
}

// minInitSize is the least size the database may be grown to: below it the seeding's
// phases are too short to compare.
const minInitSize = 16 << 20

// Spec reads the settings' text, every problem at once and without reading the cluster,
// and makes the seeding (its Run opens the cluster); what the seeding itself must be, its
// Validate checks, and the problems of both are reported together.
func (s *SeedSettings) Spec() (*Seed, error) {
	o, err := s.options()
	errs := []error{err}
	if s.Sync && s.Async {
		errs = append(errs, agerr.BadInputf("--sync and --async: choose one"))
	}
	size, err := s.initSize()
	errs = append(errs, err)
	var variants []seed.Variant
	if len(s.Compare) > 0 {
		variants, err = seed.ParseCompare(s.Compare, seed.Variant{Method: o.Method, Compress: o.Compress})
		errs = append(errs, err)
	}
	sp := &Seed{Cluster: s.Cluster, Options: o, Variants: variants, Repeat: s.Repeat, InitSize: size, InitOnly: s.InitOnly}
	if err := agerr.Join(append(errs, sp.check(len(s.Compare) > 0)...)...); err != nil {
		return nil, err
	}
	if err := sp.Validate(); err != nil {
		return nil, err
	}
	return sp, nil
}

// options are the seeding's options, with the sizes and the compression read.
func (s *SeedSettings) options() (seed.Options, error) {
	var errs []error
	o := seed.Options{Method: s.Method, Name: s.Name, Sync: s.Sync, CatchUpTimeout: s.CatchUpTimeout, BackupDir: s.BackupDir,
		KeepBackup: s.KeepBackup, Retries: s.Retries, NoWireMeter: s.NoWireMeter}
	var err error
	if o.Compress, err = seed.ParseCompression(s.Compress); err != nil {
		errs = append(errs, err)
	}
	if s.MaxRate != "" {
		if o.MaxRate, err = units.ParseBytesFraction(s.MaxRate); err != nil {
			errs = append(errs, agerr.BadInputf("--max-rate: %v", err))
		}
	}
	if o.LagThreshold, err = units.ParseBytesFraction(s.LagThreshold); err != nil {
		errs = append(errs, agerr.BadInputf("--lag-threshold: %v", err))
	}
	return o, agerr.Join(errs...)
}

// initSize is the size the database is to be grown to first (0: it is not).
func (s *SeedSettings) initSize() (int64, error) {
	if s.InitSize == "" {
		return 0, nil
	}
	size, err := units.ParseBytesFraction(s.InitSize)
	if err != nil || size < minInitSize {
		return size, agerr.BadInputf("--init-size %q: want a size of 16M or more (e.g. 2G)", s.InitSize)
	}
	return size, nil
}
