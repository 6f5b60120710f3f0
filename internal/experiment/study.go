package experiment

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/plan"
)

// RegistryKinds finds the kind a study's experiment names by its command's words, and makes a
// fresh flag set of it with its builder; ok is false for words that name no kind.
func RegistryKinds(words []string) (*pflag.FlagSet, Builder, bool) {
	m, ok := Lookup(strings.Join(words, " "))
	if !ok {
		return nil, nil, false
	}
	fs := pflag.NewFlagSet(m.Name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs, m.Build(fs), true
}

// Build registers the kind's flags on fs and returns its builder, which refuses positional
// arguments when the kind takes none (as bad input, naming the command).
func (m Meta) Build(fs *pflag.FlagSet) Builder {
	build := m.Flags(fs)
	return func(args []string) (Experiment, error) {
		if m.Use == "" && len(args) > 0 {
			return nil, agerr.BadInputf("agbench %s takes no arguments, got %q", m.Name, strings.Join(args, " "))
		}
		return build(args)
	}
}

// Catalog is the registry as a plan's catalog (plan.Check): a study's commands are the
// kinds, and their flags are the kinds' flags.
type Catalog struct{}

// Command reports whether words name a kind.
func (c Catalog) Command(words []string) bool {
	_, _, ok := RegistryKinds(words)
	return ok
}

// HasFlag reports whether the kind has the flag.
func (c Catalog) HasFlag(words []string, flag string) bool {
	fs, _, ok := RegistryKinds(words)
	return ok && flag != "help" && fs.Lookup(flag) != nil
}

// CheckFlag parses value as the flag's value, on a flag set of its own.
func (c Catalog) CheckFlag(words []string, flag, value string) error {
	fs, _, ok := RegistryKinds(words)
	if !ok {
		return fmt.Errorf("no such command")
	}
	f := fs.Lookup(flag)
	if f == nil {
		return fmt.Errorf("no such flag")
	}
	return f.Value.Set(value)
}

// hasFlags says whether the experiment's kind has every flag the experiment sets.
func (c Catalog) hasFlags(e plan.Experiment) bool {
	for _, f := range e.Flags {
		if !c.HasFlag(e.Command, f.Name) {
			return false
		}
	}
	return true
}

// Study is a study's spec: its plan, and each experiment as a spec of its kind, made by the
// kind's flags and builder from the command line the plan gives it, as its command makes
// it from the same line.
type Study struct {
	Plan *plan.Plan
	// Runs are the experiments made for the folder NewStudy was given, to be checked; Run
	// makes them anew in the folder it reserves.
	Runs []StudyRun

	// Experiment runs one experiment's spec with its progress and shows its outcome (the
	// command layer's view of its kind), and returns the experiment's error. Run needs it.
	Experiment func(ctx context.Context, r StudyRun) error
	// Report renders the results in the study's folder once its experiments have ended
	// (nil: no report).
	Report func(dir string) error
	// Agbench returns the agbench binary that serves a created cluster's links and
	// listener in the background (ClusterOptions).
	Agbench func() (string, error)
}

// StudyRun is one experiment of a study.
type StudyRun struct {
	// Label names the experiment (its folder is NN-label).
	Label string
	// Args is the experiment's command line, as the study shows and logs it.
	Args []string
	// Words are its command's; Flags its kind's flags, set from Args.
	Words []string
	Flags *pflag.FlagSet
	// Spec is the experiment (nil when the plan names no kind or flag of it: plan.Check
	// says so).
	Spec Experiment

	err error
	pos plan.Pos
	i   int
}

// Err is why the experiment's spec could not be made from its command line, or nil.
func (r *StudyRun) Err() error { return r.err }

// NewStudy makes the spec of every experiment of p whose kind and flags exist (Catalog
// checks the others), writing into the study's folder dir.
func NewStudy(p *plan.Plan, dir string) *Study {
	s := &Study{Plan: p}
	cat := Catalog{}
	for i, e := range p.Experiments {
		run := StudyRun{Label: e.Label(), Words: e.Command, pos: e.Pos, i: i}
		fs, build, ok := RegistryKinds(e.Command)
		if ok && cat.hasFlags(e) {
			has := func(flag string) bool { return cat.HasFlag(e.Command, flag) }
			run.Args = p.Args(i, dir, filepath.Join(dir, fmt.Sprintf("%02d-%s", i+1, e.Label())), has)
			run.Flags = fs
			if err := fs.Parse(run.Args[len(e.Command):]); err != nil {
				name := strings.Join(e.Command, " ")
				run.err = agerr.BadInputf("agbench %s: %v (see agbench %s --help)", name, err, name)
			} else {
				run.Spec, run.err = build(fs.Args())
			}
		}
		s.Runs = append(s.Runs, run)
	}
	return s
}

// Validate checks every spec as its command checks it before it reads a cluster or
// connects, and reports every problem of every experiment at once, each line with the
// experiment's place in the plan file.
func (s *Study) Validate() error {
	var errs []error
	for _, r := range s.Runs {
		err := r.err
		if err == nil && r.Spec != nil {
			err = r.Spec.Validate()
		}
		if err == nil {
			continue
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				errs = append(errs, agerr.BadInput(&plan.Error{File: s.Plan.File, Pos: r.pos,
					Msg: fmt.Sprintf("experiments[%d] (%s): %s", r.i+1, r.Label, line)}))
			}
		}
	}
	return agerr.Join(errs...)
}
