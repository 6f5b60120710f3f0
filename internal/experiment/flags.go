package experiment

import (
	"context"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/runner"
	"github.com/agbench/agbench/internal/segment"
	"github.com/agbench/agbench/internal/target"
)

// AnalysisFlags are the flags every measuring kind shares for its samplers and its closing
// analysis: --sample / --sample=false and --slo.
type AnalysisFlags struct {
	SLO    string
	Sample bool
	// NoSamplers is tpcc run's old spelling of --sample=false, kept as a hidden alias.
	NoSamplers bool
	// Hosts say where the nodes' host figures come from, for nodes on other hosts.
	Hosts HostMetricsFlags
}

// Register adds the flags to fs.
func (f *AnalysisFlags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.SLO, "slo", "", "latency objective(s) for the SLO point, e.g. p99<5ms or p50<1ms,p99<20ms")
	fs.BoolVar(&f.Sample, "sample", true, "sample the OS and the servers beside every step (--sample=false: none; the analysis then judges what needs no sampler)")
	fs.BoolVar(&f.NoSamplers, "no-samplers", false, "old spelling of --sample=false")
	_ = fs.MarkHidden("no-samplers")
	f.Hosts.Register(fs)
}

// Sampling says whether the samplers run.
func (f *AnalysisFlags) Sampling() bool { return f.Sample && !f.NoSamplers }

// HostMetrics parses the host figures' flags: they need the samplers.
func (f *AnalysisFlags) HostMetrics() (HostMetrics, error) {
	h, err := f.Hosts.Parse()
	if err == nil && h.Given() && !f.Sampling() {
		err = agerr.BadInputf("--host-metrics and --prometheus read the hosts beside each step: they need the samplers (drop --sample=false)")
	}
	return h, err
}

// SLOs parses --slo; bad input names the flag and the position.
func (f *AnalysisFlags) SLOs() ([]analyze.SLO, error) {
	if f.SLO == "" {
		return nil, nil
	}
	s, err := analyze.ParseSLOs(f.SLO)
	if err != nil {
		return nil, agerr.BadInputf("--slo %q: %v", f.SLO, err)
	}
	return s, nil
}

// staleProbeFlag registers --stale-probe on a load kind.
func staleProbeFlag(fs *pflag.FlagSet, v *string) {
	fs.StringVar(v, "stale-probe", "", "beside the load, a writer commits a row and a read-intent session reads it at once: eventual (the session as the load's), causal (it names the write's LSN to the listener, agbench.min_lsn), both (side by side); reports the share of stale reads and the time until the write was visible (tpcc run --mode client: also its Order-Status after the VU's own Payment)")
	fs.Lookup("stale-probe").NoOptDefVal = result.StaleEventual
}

// loadFlags are the flags stress and scan share: target, sweep, shape of a step, results,
// sampling and analysis.
type loadFlags struct {
	Target     target.Spec
	Intent     string
	Threads    string
	Iterations int64
	Duration   time.Duration
	Rampup     time.Duration
	Rate       float64
	Compare    string
	Repeat     int
	Seed       int64
	Results    string
	MaxErrors  int64
	Analyse    AnalysisFlags
	StaleProbe string
	Segments   SegmentFlags

	running *Load
}

// Ran is the load that ran (nil before Run has made it).
func (f *loadFlags) Ran() *Load { return f.running }

// Steps is how many steps the flags' sweep runs (0 when they do not parse).
func (f *loadFlags) Steps() int {
	p, err := f.parse()
	if err != nil {
		return 0
	}
	return len(p.sweep.Plan())
}

// Sections are the load's.
func (f *loadFlags) Sections() []string { return (&Load{}).Sections() }

func (f *loadFlags) register(fs *pflag.FlagSet, defThreads string, defIterations int64) {
	fs.StringVar(&f.Target.Cluster, "cluster", "", "target: an agbench cluster by name")
	fs.StringVar(&f.Target.Primary, "primary", "", "target: the primary's connection string")
	fs.StringArrayVar(&f.Target.Standbys, "standby", nil, "target: a standby's connection string (repeatable)")
	fs.StringVar(&f.Target.Listener, "listener", "", "target: a listener's connection string (sessions go through it)")
	fs.StringVarP(&f.Target.Database, "database", "d", "", "database (default: the cluster's)")
	fs.StringVar(&f.Intent, "intent", string(target.ReadWrite), "sessions' intent: read-only (readonly, ro) or read-write (rw)")
	fs.StringVar(&f.Threads, "threads", defThreads, "threads (virtual users), a list runs one step per value: 1,2,4,8")
	fs.Int64Var(&f.Iterations, "iterations", defIterations, "iterations per thread (0: run for --duration)")
	fs.DurationVar(&f.Duration, "duration", 0, "run each step for this long instead of --iterations")
	fs.DurationVar(&f.Rampup, "rampup", 0, "warm-up before each step's measured window (not counted)")
	fs.Float64Var(&f.Rate, "rate", 0, "fixed rate in operations per second for the step (open model; 0: as fast as possible)")
	fs.StringVar(&f.Compare, "compare", "", "compare variants at every step, interleaved: routing=off,on")
	fs.IntVar(&f.Repeat, "repeat", 1, "run every step × variant this many times (variants shuffled per repeat); tables show medians")
	fs.Int64Var(&f.Seed, "seed", 1, "seed of all randomness")
	fs.StringVar(&f.Results, "results", "results", "folder for results/<time>-<command>/result.json")
	fs.Int64Var(&f.MaxErrors, "max-errors", 1000, "stop a step after this many failed operations (0: no limit)")
	f.Analyse.Register(fs)
	staleProbeFlag(fs, &f.StaleProbe)
	f.Segments.Register(fs)
}

// built fills in what the flags imply once parsed: --duration alone runs for a time, so
// --iterations then defaults to 0.
func (f *loadFlags) built(fs *pflag.FlagSet) {
	if f.Duration > 0 && !fs.Changed("iterations") {
		f.Iterations = 0
	}
}

// loadPlan is what the flags say once parsed.
type loadPlan struct {
	intent target.Intent
	sweep  runner.Sweep
	slos   []analyze.SLO
	seg    segment.Segment
	hosts  HostMetrics
}

// parse checks the shared flags, every problem at once, without reading a cluster or
// connecting (a study's cluster may not exist yet).
func (f *loadFlags) parse() (loadPlan, error) {
	var errs []error
	intent, err := target.ParseIntent(f.Intent)
	errs = append(errs, err)
	threads, err := runner.ParseInts("--threads", f.Threads, 1)
	errs = append(errs, err)
	seg, err := f.Segments.Parse()
	errs = append(errs, err)
	for _, n := range threads {
		errs = append(errs, checkShare(seg, "--threads", n))
	}
	sweep := runner.Sweep{Axes: []runner.Axis{{Name: "threads", Values: itoas(threads)}}, Repeat: f.Repeat, Seed: f.Seed}
	if f.Compare != "" {
		ax, err := ParseRoutingCompare(f.Compare)
		errs = append(errs, err)
		sweep.Compare = ax
	}
	switch {
	case f.Iterations < 0:
		errs = append(errs, agerr.BadInputf("--iterations %d: must be 0 or more", f.Iterations))
	case f.Iterations == 0 && f.Duration <= 0:
		errs = append(errs, agerr.BadInputf("--iterations 0 needs --duration"))
	case f.Iterations > 0 && f.Duration > 0:
		errs = append(errs, agerr.BadInputf("--iterations and --duration: give one"))
	}
	if f.Rampup < 0 || f.Duration < 0 {
		errs = append(errs, agerr.BadInputf("--rampup and --duration must not be negative"))
	}
	if f.Rate < 0 {
		errs = append(errs, agerr.BadInputf("--rate %v: must be 0 or more", f.Rate))
	}
	if f.Repeat < 1 {
		errs = append(errs, agerr.BadInputf("--repeat %d: at least 1", f.Repeat))
	}
	if f.MaxErrors < 0 {
		errs = append(errs, agerr.BadInputf("--max-errors %d: must be 0 or more", f.MaxErrors))
	}
	if f.Results == "" {
		errs = append(errs, agerr.BadInputf("--results: empty folder name"))
	}
	slos, err := f.Analyse.SLOs()
	errs = append(errs, err)
	hosts, err := f.Analyse.HostMetrics()
	errs = append(errs, err)
	_, err = StaleProbeMode(f.StaleProbe, intent == target.ReadOnly, nil, sweep.Compare != nil)
	return loadPlan{intent: intent, sweep: sweep, slos: slos, seg: seg, hosts: hosts}, agerr.Join(append(errs, err, target.CheckSpec(f.Target))...)
}

// load resolves the target of the checked flags (home: where --cluster is found) and
// returns the experiment; command names it in the result, unit names its throughput.
func (f *loadFlags) load(home, command, unit string) (*Load, error) {
	p, err := f.parse()
	if err != nil {
		return nil, err
	}
	tgt, err := target.Resolve(home, f.Target)
	if err != nil {
		return nil, err
	}
	probe, err := StaleProbeMode(f.StaleProbe, p.intent == target.ReadOnly, tgt, p.sweep.Compare != nil)
	if err != nil {
		return nil, err
	}
	if p.sweep.Compare != nil {
		if err := CheckRoutingTarget(tgt); err != nil {
			return nil, err
		}
	}
	return &Load{
		Command: command, Target: tgt, Database: f.Target.Database, Intent: p.intent, Sweep: p.sweep,
		Step:   runner.StepSpec{Iterations: f.Iterations, Duration: f.Duration, Rampup: f.Rampup, Rate: f.Rate, MaxErrors: f.MaxErrors},
		Sample: f.Analyse.Sampling(), Analyse: true,
		AnalysisOptions: analyze.Options{LoadName: "threads", Unit: unit, SLOs: p.slos},
		StaleProbe:      probe, Hosts: p.hosts,
		Segment: p.seg, SegmentRun: f.Segments.Run, SegmentTimeout: f.Segments.Timeout,
	}, nil
}

// checkInit refuses --init in a segment: segments starting together would race to make the
// table; make it first with a run of one.
func (f *loadFlags) checkInit(rows int64) error {
	if rows > 0 && f.Segments.Given() {
		return agerr.BadInputf("--init with --segment: the segments would race to make the table; make it first (a run without --segment)")
	}
	return nil
}

// start resolves the target, starts the load (Load.Start) and makes the --init table of
// rows rows (none for 0). Close the load it returns.
func (f *loadFlags) start(ctx context.Context, r *Running, command, unit, table string, rows int64) (*Load, error) {
	l, err := f.load(r.Home(), command, unit)
	if err != nil {
		return nil, err
	}
	f.running = l
	if err := l.Start(ctx); err != nil {
		return nil, err
	}
	if err := l.initTable(ctx, r, table, rows); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

func itoas(ns []int) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = strconv.Itoa(n)
	}
	return out
}
