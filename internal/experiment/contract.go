package experiment

import (
	"context"

	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/result"
)

// Experiment is the one contract of every kind (stress, scan and tpcc run through Load;
// disk, seed, readahead, drill): a spec that is checked without connecting, run with the
// one recorder and an event stream, and the result sections it writes. Kinds with more to
// do implement the optional interfaces below (Analyser, Analysed).
type Experiment interface {
	// Kind names the experiment in the result and its folder ("stress", "tpcc run").
	Kind() string
	// Validate checks the spec, every problem at once, without connecting to a server or
	// making anything: a spec it refuses is bad input.
	Validate() error
	// Run runs the spec into the run's recorder (every step written as it ends) and sends
	// its progress as events; it returns why the run did not complete, or nil. It takes the
	// recorder (Running.Recorder) once what it needs is made and checked, so that bad input
	// found while preparing leaves no folder. The recorder's end (complete or incomplete),
	// the analysis and the last write are Run's caller's (experiment.Run).
	Run(ctx context.Context, r *Running) error
	// Sections names the result's sections (result.Extra keys) the kind writes, at the
	// run's level or its steps'.
	Sections() []string
}

// Analyser is a kind whose run internal/analyze judges once it has ended.
type Analyser interface {
	// Analysis says how (false: this run is not analysed).
	Analysis() (analyze.Options, bool)
}

// MergeChecker is a kind that checks the merged result of its segments once, on their sums:
// what no segment could check of its share alone (tpcc's client counts against the
// server's, which are the whole run's), given the segments' own results it was merged from.
type MergeChecker interface {
	CheckMerged(m *result.Result, segs []*result.Result)
}

// Analysed is an Analyser that takes the analysis into its own sections (disk's marks).
type Analysed interface {
	Analyser
	Analysed(r *Recorder, run *analyze.Run)
}

// Running is what a kind's Run is given: the recorder of its result and its event stream.
type Running struct {
	// Events gets the run's progress; nil drops it (Emit).
	Events func(Event)

	setup Setup
	kind  string
	rec   *Recorder
}

// Recorder reserves the run's folder and starts its result on the first call, and returns
// the same recorder on every later one.
func (r *Running) Recorder() (*Recorder, error) {
	if r.rec != nil {
		return r.rec, nil
	}
	rec, err := NewRecorder(r.setup.Results, r.kind, r.setup.Version, r.setup.Args)
	if err != nil {
		return nil, err
	}
	r.rec = rec
	return rec, nil
}

// Home is agbench's home, where a target's --cluster is found (cluster.Home).
func (r *Running) Home() string { return r.setup.Home }

// Event is one piece of a run's progress: a runner.Progress tick, StepEnded, DiskStep,
// DiskStepEnded, Log, SeedBegin, seed.Progress or SeedEnded; a study's StudyBegun to
// ClusterDestroyed. The command layer shows them;
// an event never changes what is recorded.
type Event any

// Emit sends an event to the stream.
func (r *Running) Emit(e Event) {
	if r.Events != nil {
		r.Events(e)
	}
}

// StepEnded is sent when a step of the runner's has ended and been written; Segment is the
// run's segment (nil for a whole run), whose share of the load the step ran.
type StepEnded struct {
	Step    result.Step
	Segment *result.Segment
}

// Log is a line about what the run is doing between its steps.
type Log struct{ Line string }

// Setup is how a run is recorded: agbench's version, the command line and the folder of
// result folders; Home is agbench's home, where a spec's cluster is found.
type Setup struct {
	Version string
	Args    []string
	Results string
	Home    string
	// Events gets the run's progress (nil: none).
	Events func(Event)
}

// Outcome is what a run produced: the result (also when cut short), where it was written
// ("" when nothing was kept) and the analysis (nil without one).
type Outcome struct {
	Result   *result.Result
	Path     string
	Analysis *analyze.Run
}

// Run is the one life of a result, for every kind: it validates the spec, runs the kind
// with the recorder and the event stream, marks the result complete or incomplete (cut
// short, failed), attaches the analysis of an Analyser and writes the result a last time.
// A spec refused by Validate, or a run that ends before it takes its recorder, makes no
// folder and returns a nil outcome; a run that failed before it measured anything leaves
// no folder either. It returns the run's error joined with any write error.
func Run(ctx context.Context, e Experiment, s Setup) (*Outcome, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	r := &Running{Events: s.Events, setup: s, kind: e.Kind()}
	runErr := e.Run(ctx, r)
	rec := r.rec
	if rec == nil {
		return nil, runErr
	}
	rec.End(runErr)
	out := &Outcome{Result: rec.Result}
	if a, ok := e.(Analyser); ok {
		if o, ok := a.Analysis(); ok {
			out.Analysis = rec.Analyse(o)
			if d, ok := e.(Analysed); ok && out.Analysis != nil {
				d.Analysed(rec, out.Analysis)
			}
		}
	}
	var err error
	out.Path, err = rec.Finish()
	return out, err
}
