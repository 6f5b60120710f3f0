package experiment

import (
	"context"
	"fmt"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/result"
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
	// Version is agbench's version and Args the command line, as the result records them.
	Version string
	Args    []string
	// Results is the folder of result folders.
	Results string
	Topo    *cluster.Topology
	// Options are the seeding's options; each run sets Method and Compress from its variant.
	Options seed.Options
	// Variants are compared (one run of the options' own method and compression when
	// empty); Repeat runs every variant this many times, round after round.
	Variants []seed.Variant
	Repeat   int
	// Config is the command's effective configuration for the result.
	Config map[string]any
}

// SeedHooks let the command show progress; any may be nil.
type SeedHooks struct {
	// Begin is called before a run and returns the run's progress callback (or nil).
	Begin func(run seed.Run, compare bool) func(seed.Progress)
	// End is called after a run, with its report and error.
	End func(rep *seed.Report, err error, compare bool)
}

// SeedOutcome is what a seeding run produced.
type SeedOutcome struct {
	Result *result.Result
	Path   string
}

// Compare says whether variants are compared.
func (s *Seed) Compare() bool { return len(s.Variants) > 0 }

// Run seeds every run of the plan and records each as a step of the result.
func (s *Seed) Run(ctx context.Context, h SeedHooks) (*SeedOutcome, error) {
	variants := s.Variants
	if len(variants) == 0 {
		variants = []seed.Variant{{Method: s.Options.Method, Compress: s.Options.Compress}}
	}
	rec, err := NewRecorder(s.Results, "seed", s.Version, s.Args)
	if err != nil {
		return nil, err
	}
	res := rec.Result
	res.Meta.Config = s.Config
	rec.describeCluster(ctx, s.Topo)
	compare := s.Compare()
	var runErr error
	for i, run := range seed.Plan(variants, max(s.Repeat, 1)) {
		o := s.Options
		o.Method, o.Compress = run.Variant.Method, run.Variant.Compress
		if h.Begin != nil {
			o.Progress = h.Begin(run, compare)
		}
		rep, err := seed.Seed(ctx, s.Topo, o)
		if h.End != nil {
			h.End(rep, err, compare)
		}
		if err != nil {
			if agerr.IsBadInput(err) && i == 0 {
				rec.End(err)
				_, _ = rec.Finish() // nothing was made: no folder is left
				return nil, err
			}
			runErr = err
			break
		}
		rec.AddStep(rep.Step(i, run.Point, run.Repeat, run.Variant.Label(), nil)) // variants in Variant; no swept knob
		if compare {
			if err := seed.Drop(context.WithoutCancel(ctx), s.Topo, rep.Standby); err != nil {
				runErr = fmt.Errorf("drop %s between runs: %w", rep.Standby, err)
				break
			}
		}
	}
	rec.End(runErr)
	out := &SeedOutcome{Result: res}
	out.Path, err = rec.Finish()
	return out, err
}
