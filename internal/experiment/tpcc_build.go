package experiment

import (
	"context"
	"runtime"

	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/privilege"
	"github.com/agbench/agbench/internal/target"
	"github.com/agbench/agbench/internal/workload/tpcc"
)

func init() {
	Register(Meta{Name: "tpcc build", Description: "Create the schema and load W warehouses in parallel",
		Long: `Create schema tpcc and load --warehouses warehouses with binary COPY by --build-vus
loaders in parallel (each warehouse by exactly one loader), then make the primary keys and
the secondary indexes (customer by last name, orders by customer), install the server-side
functions (not with --mode client), ANALYZE and CHECKPOINT. The data is deterministic from --seed. A build cut short
(Ctrl-C) leaves a schema marked half-built: build again (it is dropped first) or drop it.`,
		Flags: func(fs *pflag.FlagSet) Builder {
			s := &TPCCBuild{Progress: &tpcc.Progress{}}
			TPCCTargetFlags(fs, &s.Target, false)
			fs.IntVar(&s.Options.Warehouses, "warehouses", 1, "number of warehouses (about 100 MB each)")
			fs.IntVar(&s.Options.Loaders, "build-vus", runtime.NumCPU(), "parallel loaders (connections)")
			fs.Int64Var(&s.Seed, "seed", 1, "seed of all generated data")
			fs.StringVar(&s.Mode, "mode", string(tpcc.ModeFunctions), "functions (install the server-side functions) or client (tables only)")
			return func([]string) (Experiment, error) { return s, nil }
		}})
}

// TPCCBuild is a tpcc build's spec: the schema made and loaded on the target's primary. It
// prepares the runs that follow and records no result of its own; Progress follows the
// build as it goes, and Report is what it built.
type TPCCBuild struct {
	Target   target.Spec
	Options  tpcc.BuildOptions
	Seed     int64
	Mode     string
	Progress *tpcc.Progress
	Report   *tpcc.BuildReport
}

// Kind is tpcc build.
func (s *TPCCBuild) Kind() string { return "tpcc build" }

// options are the build's options as the flags give them.
func (s *TPCCBuild) options() (tpcc.BuildOptions, error) {
	o := s.Options
	o.Seed = uint64(s.Seed)
	mode, merr := tpcc.ParseMode(s.Mode)
	o.NoFunctions = mode == tpcc.ModeClient
	o.Progress = s.Progress
	var serr error
	if s.Seed < 0 {
		serr = agerr.BadInputf("--seed %d: must be 0 or more", s.Seed)
	}
	return o, agerr.Join(target.CheckSpec(s.Target), o.Validate(), serr, merr)
}

// Validate checks the flags without reading a cluster or connecting.
func (s *TPCCBuild) Validate() error {
	_, err := s.options()
	return err
}

// Run checks the target (its primary is a primary, the database exists, the login is
// accepted and holds what a build needs) and builds the schema; it never takes its recorder.
func (s *TPCCBuild) Run(ctx context.Context, r *Running) error {
	o, err := s.options()
	if err != nil {
		return err
	}
	tgt, err := target.Resolve(r.Home(), s.Target)
	if err != nil {
		return err
	}
	primary, err := TPCCPrimary(tgt)
	if err != nil {
		return err
	}
	if err := tgt.Check(ctx); err != nil {
		return err
	}
	if err := privilege.Check(ctx, tgt, TPCCBuildNeeds()); err != nil {
		return err
	}
	s.Report, err = tpcc.Build(ctx, primary, o)
	return err
}

// Sections: a build writes no result.
func (s *TPCCBuild) Sections() []string { return nil }
