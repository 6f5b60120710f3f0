package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/runner"
	"github.com/agbench/agbench/internal/target"
)

// loadFlags are the flags every load command (stress, scan) shares: target, sweep, shape
// of a step, results, sampling and analysis.
type loadFlags struct {
	spec       target.Spec
	intent     string
	threads    string
	iterations int64
	duration   time.Duration
	rampup     time.Duration
	rate       float64
	compare    string
	repeat     int
	seed       int64
	results    string
	maxErrors  int64
	analysis   analysisFlags
	staleProbe string

	// what check parsed, for load
	parsedIntent target.Intent
	sweep        runner.Sweep
	slos         []analyze.SLO
}

func (f *loadFlags) add(c *cobra.Command, defThreads string, defIterations int64) {
	fs := c.Flags()
	fs.StringVar(&f.spec.Cluster, "cluster", "", "target: an agbench cluster by name")
	fs.StringVar(&f.spec.Primary, "primary", "", "target: the primary's connection string")
	fs.StringArrayVar(&f.spec.Standbys, "standby", nil, "target: a standby's connection string (repeatable)")
	fs.StringVar(&f.spec.Listener, "listener", "", "target: a listener's connection string (sessions go through it)")
	fs.StringVarP(&f.spec.Database, "database", "d", "", "database (default: the cluster's)")
	fs.StringVar(&f.intent, "intent", string(target.ReadWrite), "sessions' intent: read-only (readonly, ro) or read-write (rw)")
	fs.StringVar(&f.threads, "threads", defThreads, "threads (virtual users), a list runs one step per value: 1,2,4,8")
	fs.Int64Var(&f.iterations, "iterations", defIterations, "iterations per thread (0: run for --duration)")
	fs.DurationVar(&f.duration, "duration", 0, "run each step for this long instead of --iterations")
	fs.DurationVar(&f.rampup, "rampup", 0, "warm-up before each step's measured window (not counted)")
	fs.Float64Var(&f.rate, "rate", 0, "fixed rate in operations per second for the step (open model; 0: as fast as possible)")
	fs.StringVar(&f.compare, "compare", "", "compare variants at every step, interleaved: routing=off,on")
	fs.IntVar(&f.repeat, "repeat", 1, "run every step × variant this many times (variants shuffled per repeat); tables show medians")
	fs.Int64Var(&f.seed, "seed", 1, "seed of all randomness")
	fs.StringVar(&f.results, "results", "results", "folder for results/<time>-<command>/result.json")
	fs.Int64Var(&f.maxErrors, "max-errors", 1000, "stop a step after this many failed operations (0: no limit)")
	f.analysis.register(fs)
	staleProbeFlag(fs, &f.staleProbe)
}

// check validates the shared flags, every problem at once, without reading a cluster or
// connecting (a plan's cluster may not exist yet), and keeps what it parsed for load.
func (f *loadFlags) check(cmd *cobra.Command) error {
	var errs []error
	intent, err := target.ParseIntent(f.intent)
	errs = append(errs, err)
	threads, err := runner.ParseInts("--threads", f.threads, 1)
	errs = append(errs, err)
	ts := make([]string, len(threads))
	for i, t := range threads {
		ts[i] = strconv.Itoa(t)
	}
	sweep := runner.Sweep{Axes: []runner.Axis{{Name: "threads", Values: ts}}, Repeat: f.repeat, Seed: f.seed}
	if f.compare != "" {
		ax, err := experiment.ParseRoutingCompare(f.compare)
		errs = append(errs, err)
		sweep.Compare = ax
	}
	// --duration alone runs for a time: --iterations then defaults to 0.
	if f.duration > 0 && !cmd.Flags().Changed("iterations") {
		f.iterations = 0
	}
	switch {
	case f.iterations < 0:
		errs = append(errs, agerr.BadInputf("--iterations %d: must be 0 or more", f.iterations))
	case f.iterations == 0 && f.duration <= 0:
		errs = append(errs, agerr.BadInputf("--iterations 0 needs --duration"))
	case f.iterations > 0 && f.duration > 0:
		errs = append(errs, agerr.BadInputf("--iterations and --duration: give one"))
	}
	if f.rampup < 0 || f.duration < 0 {
		errs = append(errs, agerr.BadInputf("--rampup and --duration must not be negative"))
	}
	if f.rate < 0 {
		errs = append(errs, agerr.BadInputf("--rate %v: must be 0 or more", f.rate))
	}
	if f.repeat < 1 {
		errs = append(errs, agerr.BadInputf("--repeat %d: at least 1", f.repeat))
	}
	if f.maxErrors < 0 {
		errs = append(errs, agerr.BadInputf("--max-errors %d: must be 0 or more", f.maxErrors))
	}
	if f.results == "" {
		errs = append(errs, agerr.BadInputf("--results: empty folder name"))
	}
	slos, err := f.analysis.slos()
	errs = append(errs, err)
	_, err = experiment.StaleProbeMode(f.staleProbe, intent == target.ReadOnly, nil, sweep.Compare != nil)
	f.parsedIntent, f.sweep, f.slos = intent, sweep, slos
	return agerr.Join(append(errs, err, target.CheckSpec(f.spec))...)
}

// load resolves the target of the checked flags and returns the experiment; command names
// it in the result, unit names its throughput ("it/s").
func (f *loadFlags) load(a *app, command, unit string) (*experiment.Load, error) {
	intent, sweep, slos := f.parsedIntent, f.sweep, f.slos
	tgt, err := target.Resolve(home(a), f.spec)
	if err != nil {
		return nil, err
	}
	probe, err := experiment.StaleProbeMode(f.staleProbe, intent == target.ReadOnly, tgt, sweep.Compare != nil)
	if err != nil {
		return nil, err
	}
	if sweep.Compare != nil {
		if err := experiment.CheckRoutingTarget(tgt); err != nil {
			return nil, err
		}
	}
	return &experiment.Load{
		Command: command, Target: tgt, Database: f.spec.Database, Intent: intent, Sweep: sweep,
		Step:   runner.StepSpec{Iterations: f.iterations, Duration: f.duration, Rampup: f.rampup, Rate: f.rate, MaxErrors: f.maxErrors},
		Sample: f.analysis.sampling(), Analyse: true,
		AnalysisOptions: analyze.Options{LoadName: "threads", Unit: unit, SLOs: slos},
		StaleProbe:      probe,
	}, nil
}

// setup is how a command's run is recorded: this agbench's version, the command line as
// cobra parsed it (cmdArgs) and the folder of result folders; events get its progress.
func setup(cmd *cobra.Command, results string, events func(experiment.Event)) experiment.Setup {
	return experiment.Setup{Version: version, Args: cmdArgs(cmd), Results: results, Events: events}
}

// cmdArgs is the command line as cobra parsed it, in a form that runs again when pasted:
// a flag and its value as two words, a boolean flag as --name=value (a boolean flag takes
// no separate value word).
func cmdArgs(cmd *cobra.Command) []string {
	args := strings.Fields(cmd.CommandPath())[1:]
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if f.Value.Type() == "bool" {
			args = append(args, "--"+f.Name+"="+f.Value.String())
			return
		}
		if sv, ok := f.Value.(interface{ GetSlice() []string }); ok {
			for _, v := range sv.GetSlice() {
				args = append(args, "--"+f.Name, v)
			}
			return
		}
		args = append(args, "--"+f.Name, f.Value.String())
	})
	return args
}

// progress shows the runner's ticks, one rewritten line on a terminal and a line every
// progressEvery otherwise, and a line when a step ends.
type progress struct {
	w           io.Writer
	interactive bool
	of          int
	// unit names the operations ("ops", "tx").
	unit     string
	last     int
	lastLine time.Time
}

// progressEvery is how often a line of progress is printed when stderr is not a terminal.
const progressEvery = 10 * time.Second

func newProgress(a *app, of int, unit string) *progress {
	return &progress{w: a.stderr, interactive: a.interactive, of: of, unit: unit}
}

// event shows a load's event: a tick or a step's end.
func (p *progress) event(e experiment.Event) {
	switch e := e.(type) {
	case runner.Progress:
		p.show(e)
	case experiment.StepEnded:
		p.done(e.Step)
	}
}

func (p *progress) show(pr runner.Progress) {
	if !p.interactive && time.Since(p.lastLine) < progressEvery {
		return
	}
	p.lastLine = time.Now()
	phase := fmt.Sprintf("measuring %3.0fs", pr.Elapsed.Seconds())
	if pr.Spec.Duration > 0 {
		phase += fmt.Sprintf(" of %.0fs", pr.Spec.Duration.Seconds())
	}
	if !pr.Measuring {
		phase = fmt.Sprintf("ramp-up, %3.0fs left", max(0, -pr.Elapsed.Seconds()))
	}
	line := fmt.Sprintf("step %d/%d %s: %s, %d %s, %d errors, %.0f %s/s",
		pr.Point.Index+1, pr.Of, pr.Point, phase, pr.Ops, p.unit, pr.Errors, pr.Rate, p.unit)
	switch {
	case pr.TickOps > 0:
		line += fmt.Sprintf(", p50 %v, p99 %v", pr.P50.Round(time.Microsecond), pr.P99.Round(time.Microsecond))
	case pr.Ops > 0: // none in the last tick: no latency to show, never 0s
		line += ", p50 –, p99 – (none done in the last tick)"
	}
	if !p.interactive {
		fmt.Fprintln(p.w, line)
		return
	}
	pad := max(p.last-len(line), 0)
	p.last = len(line)
	fmt.Fprint(p.w, "\r"+line+strings.Repeat(" ", pad))
}

func (p *progress) done(st result.Step) {
	p.clear()
	t := st.Totals()
	pt := runner.Point{Params: st.Params, Repeat: st.Repeat} // named as the ticks name it
	fmt.Fprintf(p.w, "step %d/%d %s: %.2fs, %d %s, %d errors, %.0f %s/s\n",
		st.Index+1, p.of, pt, st.Window.Seconds(), t.Count, p.unit, t.Errors, st.OpsPerSecond(), p.unit)
}

func (p *progress) clear() {
	if p.interactive && p.last > 0 {
		fmt.Fprint(p.w, "\r"+strings.Repeat(" ", p.last)+"\r")
		p.last = 0
	}
}
