package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/listener"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/runner"
	"github.com/agbench/agbench/internal/target"
	"github.com/agbench/agbench/internal/workload"
	"github.com/agbench/agbench/internal/workload/pgops"
)

// loadFlags are the flags every load command (stress, scan) shares: target, sweep, shape
// of a step, results.
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
	sample     bool
}

func (f *loadFlags) add(c *cobra.Command, defThreads string, defIterations int64) {
	fs := c.Flags()
	fs.StringVar(&f.spec.Cluster, "cluster", "", "target: an agbench cluster by name")
	fs.StringVar(&f.spec.Primary, "primary", "", "target: the primary's connection string")
	fs.StringArrayVar(&f.spec.Standbys, "standby", nil, "target: a standby's connection string (repeatable)")
	fs.StringVar(&f.spec.Listener, "listener", "", "target: a listener's connection string (sessions go through it)")
	fs.StringVarP(&f.spec.Database, "database", "d", "", "database (default: the cluster's)")
	fs.StringVar(&f.intent, "intent", string(target.ReadWrite), "sessions' intent: read-only or read-write")
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
	fs.BoolVar(&f.sample, "sample", true, "sample the OS and the servers beside every step and analyse the run (--sample=false: neither)")
}

// loadPlan is a checked load command line.
type loadPlan struct {
	f       *loadFlags
	intent  target.Intent
	sweep   runner.Sweep
	tgt     *target.Target
	routing bool // --compare routing=...
	// routes maps a routing variant ("off", "on") to the connection string of the
	// in-process listener that serves it; listenerAddr records it for the result.
	routes       map[string]string
	listenerAddr string
	listeners    []*listener.Listener
	// restarts is true when the servers restart between steps (cold scans).
	restarts bool
	// unit names the throughput in the analysis ("it/s").
	unit string
	// analysis is internal/analyze's view of the run, also stored in the result.
	analysis *analyze.Run
}

// check validates the shared flags, every problem at once, and resolves the target.
func (f *loadFlags) check(a *app) (*loadPlan, error) {
	p := &loadPlan{f: f}
	var errs []error
	var err error
	if p.intent, err = target.ParseIntent(f.intent); err != nil {
		errs = append(errs, err)
	}
	threads, err := runner.ParseInts("--threads", f.threads, 1)
	errs = append(errs, err)
	ts := make([]string, len(threads))
	for i, t := range threads {
		ts[i] = strconv.Itoa(t)
	}
	p.sweep = runner.Sweep{Axes: []runner.Axis{{Name: "threads", Values: ts}}, Repeat: f.repeat, Seed: f.seed}
	if f.compare != "" {
		ax, err := runner.ParseCompare(f.compare)
		errs = append(errs, err)
		if ax != nil {
			switch ax.Name {
			case "routing":
				for _, v := range ax.Values {
					if v != "off" && v != "on" {
						errs = append(errs, agerr.BadInputf("--compare routing=%s: routing is off or on", strings.Join(ax.Values, ",")))
						break
					}
				}
				p.routing = true
			default:
				errs = append(errs, agerr.BadInputf("--compare %q: this command compares routing=off,on", f.compare))
			}
			p.sweep.Compare = ax
		}
	}
	switch {
	case f.iterations < 0:
		errs = append(errs, agerr.BadInputf("--iterations %d: must be 0 or more", f.iterations))
	case f.iterations == 0 && f.duration <= 0:
		errs = append(errs, agerr.BadInputf("--iterations 0 needs --duration"))
	case f.iterations > 0 && f.duration > 0:
		errs = append(errs, agerr.BadInputf("--iterations and --duration: give one (set --iterations 0 with --duration)"))
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
	tgt, err := target.Resolve(home(a), f.spec)
	errs = append(errs, err)
	p.tgt = tgt
	if err := agerr.Join(errs...); err != nil {
		return nil, err
	}
	if p.routing && (p.tgt.Primary == "" || p.tgt.Listener != "") {
		return nil, agerr.BadInputf("--compare routing=off,on starts its own listeners in front of the servers: give --cluster, or --primary and --standby, not --listener")
	}
	return p, nil
}

// spec is the shape of a step.
func (p *loadPlan) spec(pt runner.Point) runner.StepSpec {
	vus, _ := strconv.Atoi(pt.Params["threads"])
	return runner.StepSpec{VUs: vus, Iterations: p.f.iterations, Duration: p.f.duration, Rampup: p.f.rampup,
		Rate: p.f.rate, MaxErrors: p.f.maxErrors}
}

// connString is where a VU of a step connects.
func (p *loadPlan) connString(params map[string]string, vu int) string {
	intent := p.intent
	if p.routing {
		// Routing is about read intent: off sends it to the primary (no routing list),
		// on routes it to the standbys.
		intent = target.ReadOnly
		if r := p.routes[params["routing"]]; r != "" {
			return target.WithIntent(r, intent)
		}
	}
	return p.tgt.ConnString(intent, vu)
}

// connector opens a VU's session and asks where it landed.
func (p *loadPlan) connector() func(ctx context.Context, vu workload.VU) (*pgx.Conn, workload.Landing, error) {
	return func(ctx context.Context, vu workload.VU) (*pgx.Conn, workload.Landing, error) {
		c, err := target.Connect(ctx, p.connString(vu.Params, vu.ID), pgops.WorkerAppName)
		if err != nil {
			return nil, workload.Landing{}, err
		}
		l, err := target.Land(ctx, c)
		if err != nil {
			c.Close(context.WithoutCancel(ctx))
			return nil, workload.Landing{}, err
		}
		return c, workload.Landing{Node: l.Node, InRecovery: l.InRecovery}, nil
	}
}

// nodeConns opens a session to the primary and every standby (not through a listener),
// for the servers' buffer counters.
func (p *loadPlan) nodeConns(ctx context.Context) ([]*pgx.Conn, error) {
	var conns []*pgx.Conn
	for _, cs := range append([]string{p.tgt.Primary}, p.tgt.Standbys...) {
		if cs == "" {
			continue
		}
		c, err := target.Connect(ctx, cs, "agbench")
		if err != nil {
			for _, o := range conns {
				o.Close(ctx)
			}
			return nil, err
		}
		conns = append(conns, c)
	}
	return conns, nil
}

// run runs the plan, writing the result file after every step and at the end, and
// printing the progress line; it returns the result (also when cut short) and the error.
func (p *loadPlan) run(ctx context.Context, a *app, cmd *cobra.Command, command string, w workload.Workload,
	config map[string]any) (*result.Result, string, error) {
	res := result.New(command, version, cmdArgs(cmd))
	res.Meta.Config = config
	res.Meta.Seed = p.f.seed
	res.Meta.Topology = p.tgt.Summary()
	if p.listenerAddr != "" {
		res.Meta.Topology.Listener = p.listenerAddr
	}
	if p.tgt.Primary != "" {
		if c, err := target.Connect(ctx, p.tgt.Primary, "agbench"); err == nil {
			res.Meta.Server, _ = target.ServerInfo(ctx, c)
			c.Close(ctx)
		}
	}
	dir := result.RunDir(p.f.results, res.Meta.Started, command)
	var writeErr error
	save := func() {
		if _, err := result.Write(dir, res); err != nil && writeErr == nil {
			writeErr = err
		}
	}
	plan := p.sweep.Plan()
	prog := newProgress(a, len(plan))
	var samplers []runner.Sampler
	if p.f.sample {
		smps, closeSamplers, warns := p.startSamplers(ctx, !p.restarts)
		defer closeSamplers()
		samplers = smps
		res.Warnings = append(res.Warnings, warns...)
	}
	steps, err := runner.Run(ctx, runner.Config{
		Workload: w, Plan: plan, Spec: p.spec, Seed: p.f.seed, Progress: prog.show, Samplers: samplers,
		StepDone: func(steps []result.Step) {
			prog.done(steps[len(steps)-1])
			res.Steps = steps
			save()
		},
	})
	prog.clear()
	res.Steps = steps
	res.Warnings = append(res.Warnings, landingWarnings(res, p)...)
	res.Finish(err)
	if p.f.sample && len(res.Steps) > 0 {
		var aerr error
		if p.analysis, aerr = analyze.Attach(res, analyze.Options{LoadName: "threads", Unit: p.unit}); aerr != nil {
			res.Warnings = append(res.Warnings, aerr.Error())
		}
	}
	if len(res.Steps) > 0 || err == nil {
		save()
	} else {
		dir = ""
	}
	if writeErr != nil {
		err = errors.Join(err, fmt.Errorf("write result: %w", writeErr))
	}
	return res, dir, err
}

// landingWarnings says when read-intent sessions of a routed variant did not land on a
// standby, or routing-off sessions did not land on the primary.
func landingWarnings(r *result.Result, p *loadPlan) []string {
	var out []string
	for _, st := range r.Steps {
		for _, s := range st.Sessions {
			wantStandby := p.intent == target.ReadOnly && len(p.tgt.Standbys) > 0
			if p.routing {
				wantStandby = st.Params["routing"] == "on"
			}
			if !p.routing && p.intent != target.ReadOnly {
				continue
			}
			if s.InRecovery != wantStandby {
				where := "the primary"
				if s.InRecovery {
					where = "a standby"
				}
				out = append(out, fmt.Sprintf("step %d (%s): %d session(s) landed on %s (%s)", st.Index+1, st.Variant, s.Count, where, s.Node))
			}
		}
	}
	return out
}

func cmdArgs(cmd *cobra.Command) []string {
	args := strings.Fields(cmd.CommandPath())[1:]
	cmd.Flags().Visit(func(f *pflag.Flag) {
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

// progress shows a line per tick on a terminal (overwritten) and a line per step otherwise.
type progress struct {
	w           io.Writer
	interactive bool
	of          int
	last        int
}

func newProgress(a *app, of int) *progress {
	return &progress{w: a.stderr, interactive: a.interactive, of: of}
}

func (p *progress) show(pr runner.Progress) {
	if !p.interactive {
		return
	}
	phase := "run"
	if !pr.Measuring {
		phase = "ramp-up"
	}
	line := fmt.Sprintf("\rstep %d/%d %s %s %5.1fs  ops %d  err %d  %.0f/s  p50 %v  p99 %v",
		pr.Point.Index+1, pr.Of, pr.Point, phase, pr.Elapsed.Seconds(), pr.Ops, pr.Errors, pr.Rate,
		pr.P50.Round(time.Microsecond), pr.P99.Round(time.Microsecond))
	pad := max(p.last-len(line), 0)
	p.last = len(line)
	fmt.Fprint(p.w, line+strings.Repeat(" ", pad))
}

func (p *progress) done(st result.Step) {
	p.clear()
	t := st.Totals()
	fmt.Fprintf(p.w, "step %d/%d threads=%s %s: %.2fs, %d ops, %d errors, %.0f ops/s\n",
		st.Index+1, p.of, st.Params["threads"], st.Variant, st.Window.Seconds(), t.Count, t.Errors, st.OpsPerSecond())
}

func (p *progress) clear() {
	if p.interactive && p.last > 0 {
		fmt.Fprint(p.w, "\r"+strings.Repeat(" ", p.last)+"\r")
		p.last = 0
	}
}

// printFooter prints where sessions landed, warnings, errors and the result file.
func printFooter(w io.Writer, r *result.Result, dir string, landed []string) {
	for _, l := range landed {
		fmt.Fprintln(w, "landed  "+l)
	}
	for _, st := range r.Steps {
		for _, e := range st.ErrorSamples {
			fmt.Fprintf(w, "error   step %d: %s\n", st.Index+1, e)
		}
		for _, wr := range st.Warnings {
			fmt.Fprintf(w, "warning step %d: %s\n", st.Index+1, wr)
		}
	}
	for _, wr := range r.Warnings {
		fmt.Fprintln(w, "warning "+wr)
	}
	if !r.Complete {
		fmt.Fprintf(w, "incomplete: %s (* marks steps cut short)\n", r.IncompleteReason)
	}
	if dir != "" {
		fmt.Fprintf(w, "result  %s\n", dir+"/"+result.FileName)
	}
}
