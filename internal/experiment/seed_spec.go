package experiment

import (
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
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
}

// maxSeedRepeat bounds the rounds of a comparison.
const maxSeedRepeat = 20

// minInitSize is the least size the database may be grown to: below it the seeding's
// phases are too short to compare.
const minInitSize = 16 << 20

// Spec checks the settings, every problem at once and without reading the cluster, and
// makes the seeding (its Topo is the caller's to load).
func (s *SeedSettings) Spec() (*Seed, error) {
	o, err := s.options()
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	if s.Sync && s.Async {
		errs = append(errs, agerr.BadInputf("--sync and --async: choose one"))
	}
	if s.CatchUpTimeout <= 0 {
		errs = append(errs, agerr.BadInputf("--catchup-timeout %v: must be positive", s.CatchUpTimeout))
	}
	size, err := s.initSize()
	errs = append(errs, err)
	if s.Repeat < 1 || s.Repeat > maxSeedRepeat {
		errs = append(errs, agerr.BadInputf("--repeat %d: want 1 to %d", s.Repeat, maxSeedRepeat))
	}
	var variants []seed.Variant
	if len(s.Compare) > 0 {
		variants, err = seed.ParseCompare(s.Compare, seed.Variant{Method: o.Method, Compress: o.Compress})
		errs = append(errs, err)
	} else if s.Repeat > 1 {
		errs = append(errs, agerr.BadInputf("--repeat needs --compare"))
	}
	if o.Method != seed.MethodDirect && o.Method != seed.MethodBackupRestore {
		errs = append(errs, agerr.BadInputf("--method %q: want direct or backup-restore", o.Method))
	}
	if err := agerr.Join(errs...); err != nil {
		return nil, err
	}
	if err := cluster.CheckName(s.Cluster); err != nil {
		return nil, err
	}
	return &Seed{Options: o, Variants: variants, Repeat: s.Repeat, InitSize: size, InitOnly: s.InitOnly}, nil
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
		if s.InitOnly {
			return 0, agerr.BadInputf("--init-only needs --init-size")
		}
		return 0, nil
	}
	size, err := units.ParseBytesFraction(s.InitSize)
	if err != nil || size < minInitSize {
		return size, agerr.BadInputf("--init-size %q: want a size of 16M or more (e.g. 2G)", s.InitSize)
	}
	return size, nil
}
