package experiment

import (
	"context"
	"fmt"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/seed"
)

// Seed is a seeding experiment: one seeding of a new standby per variant (method ×
// compression) and repeat, on one local cluster, each timed phase by phase; with a
// comparison, the added standby is dropped again before the next variant.
//
// It keeps its own loop rather than the runner's: a seeding is one transfer of the whole
// database into a new standby, measured by internal/seed's meter (phases, walsender CPU,
// bytes on the wire), not virtual users repeating operations in a measured window.
type Seed struct {
	// Cluster names the agbench cluster, opened by Run from the run's home; Topo is the
	// cluster once opened (or given).
	Cluster string
	Topo    *cluster.Topology
	// Options are the seeding's options; each run sets Method and Compress from its variant.
	Options seed.Options
	// Variants are compared (one run of the options' own method and compression when
	// empty); Repeat runs every variant this many times, round after round.
	Variants []seed.Variant
	Repeat   int
	// InitSize grows the database to about this size before seeding (0: as it is);
	// InitOnly stops after that, recording nothing.
	InitSize int64
	InitOnly bool
}

// SeedInit is sent while the database grows to InitSize: its size so far and the target.
type SeedInit struct{ Done, Target int64 }

// SeedInitDone is sent when the database has grown: its name, size and how long it took.
type SeedInitDone struct {
	Database string
	Size     int64
	Took     time.Duration
}

// SeedBegin is sent before a seeding of the plan; the seeding's own progress follows as
// seed.Progress events, and SeedEnded after it.
type SeedBegin struct {
	Run     seed.Run
	Compare bool
}

// SeedEnded is sent after a seeding, with its report and error.
type SeedEnded struct {
	Report  *seed.Report
	Err     error
	Compare bool
}

// Kind is "seed".
func (s *Seed) Kind() string { return "seed" }

// maxSeedRepeat bounds the rounds of a comparison.
const maxSeedRepeat = 20

// Validate checks the seeding without connecting: the method, the catch-up's timeout, the
// repeats, the growth asked for, and the cluster's name (when it is not given opened).
func (s *Seed) Validate() error {
	if err := agerr.Join(s.check(s.Compare())...); err != nil {
		return err
	}
	if s.Topo == nil {
		return cluster.CheckName(s.Cluster)
	}
	return nil
}

// check is every problem of the seeding's own values, in the order its flags' messages
// are given (the cluster's name is checked after them, alone); compare says whether
// variants were asked for (a comparison that did not parse has none, and its own error).
func (s *Seed) check(compare bool) []error {
	var errs []error
	if s.Options.CatchUpTimeout <= 0 {
		errs = append(errs, agerr.BadInputf("--catchup-timeout %v: must be positive", s.Options.CatchUpTimeout))
	}
	if s.InitOnly && s.InitSize == 0 {
		errs = append(errs, agerr.BadInputf("--init-only needs --init-size"))
	}
	if s.Repeat < 1 || s.Repeat > maxSeedRepeat {
		errs = append(errs, agerr.BadInputf("--repeat %d: want 1 to %d", s.Repeat, maxSeedRepeat))
	}
	if !compare && s.Repeat > 1 {
		errs = append(errs, agerr.BadInputf("--repeat needs --compare"))
	}
	if m := s.Options.Method; m != seed.MethodDirect && m != seed.MethodBackupRestore {
		errs = append(errs, agerr.BadInputf("--method %q: want direct or backup-restore", m))
	}
	return errs
}

// Sections: a seeding's figures are its steps' counters; it writes no section.
func (s *Seed) Sections() []string { return nil }

// All are the variants seeded: the compared ones, or the options' own method and
// compression.
func (s *Seed) All() []seed.Variant {
	if len(s.Variants) == 0 {
		return []seed.Variant{{Method: s.Options.Method, Compress: s.Options.Compress}}
	}
	return s.Variants
}

// Compare says whether variants are compared.
func (s *Seed) Compare() bool { return len(s.Variants) > 0 }

// Run seeds every run of the plan and records each as a step of the result. Bad input
// found by the first seeding (before anything was made) leaves no folder.
func (s *Seed) Run(ctx context.Context, r *Running) error {
	if s.Topo == nil {
		topo, err := cluster.Open(ctx, r.Home(), s.Cluster)
		if err != nil {
			return err
		}
		s.Topo = topo
	}
	if s.InitSize > 0 {
		if err := s.init(ctx, r); err != nil || s.InitOnly {
			return err
		}
	}
	variants := s.All()
	rec, err := r.Recorder()
	if err != nil {
		return err
	}
	rec.Result.Meta.Config = s.config()
	rec.describeCluster(ctx, s.Topo)
	compare := s.Compare()
	for i, run := range seed.Plan(variants, max(s.Repeat, 1)) {
		o := s.Options
		o.Method, o.Compress = run.Variant.Method, run.Variant.Compress
		r.Emit(SeedBegin{Run: run, Compare: compare})
		o.Progress = func(p seed.Progress) { r.Emit(p) }
		rep, err := seed.Seed(ctx, s.Topo, o)
		r.Emit(SeedEnded{Report: rep, Err: err, Compare: compare})
		if err != nil {
			return err // bad input of the first run: nothing was measured, no folder is left
		}
		rec.AddStep(rep.Step(i, run.Point, run.Repeat, run.Variant.Label(), nil)) // variants in Variant; no swept knob
		if compare {
			if err := seed.Drop(context.WithoutCancel(ctx), s.Topo, rep.Standby); err != nil {
				return fmt.Errorf("drop %s between runs: %w", rep.Standby, err)
			}
		}
	}
	return nil
}

// init grows the database to InitSize before the result is begun.
func (s *Seed) init(ctx context.Context, r *Running) error {
	start := time.Now()
	got, err := seed.InitData(ctx, s.Topo, s.InitSize, func(done, target int64) { r.Emit(SeedInit{Done: done, Target: target}) })
	if err != nil {
		return fmt.Errorf("--init-size: %w", err)
	}
	r.Emit(SeedInitDone{Database: s.Topo.Database, Size: got, Took: time.Since(start)})
	return nil
}
