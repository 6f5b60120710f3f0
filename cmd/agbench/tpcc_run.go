package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/render"
	"github.com/agbench/agbench/internal/runner"
	"github.com/agbench/agbench/internal/target"
	"github.com/agbench/agbench/internal/workload/tpcc"
)

func init() { registerKind("tpcc run", newTPCCRunCmd) }

// tpccRunOptions are the flags of tpcc run.
type tpccRunOptions struct {
	target        tpccTarget
	vus           string
	rampup        time.Duration
	duration      time.Duration
	rate          float64
	mode          string
	compare       string
	seed          int64
	allWarehouses bool
	keying        bool
	readIntent    bool
	staleProbe    string
	check         bool
	results       string
	maxErrors     int64
	repeat        int
	analysis      analysisFlags

	// what validate parsed
	sweep  runner.Sweep
	parsed tpcc.Mode
}

func newTPCCRunCmd(a *app) *cobra.Command {
	var o tpccRunOptions
	c := &cobra.Command{
		Use: "run",
		Long: `Run the five transactions from a shuffled deck of the 45/43/4/4/4 mix (clause 5.2.4.2)
with --vus virtual users per step (a list sweeps), each with a home warehouse and district
spread evenly (or any warehouse with --all-warehouses). Each step ramps up for --rampup,
then measures for --duration.

NOPM (New-Orders per minute) and TPM (transactions per minute) are counted by the client
and cross-checked against the server as HammerDB computes them (the districts' next order
ids, pg_stat_database's commits + rollbacks); a warning says when they disagree.

--read-intent runs Order-Status and Stock-Level on a second, read-intent, session of each
VU: to the standbys in turn (or to --listener, declaring read intent);
--compare routing=off,on starts an agbench listener per variant in front of the servers
(off: read intent lands on the primary; on: routed to the standbys) and runs both at every
step, interleaved (the articles' "AG" vs "AG with ROR"). --keying adds the specification's keying and think times (excluded from
latency). Every run writes results/<time>-tpcc-run/result.json, also when cut short.`,
		Args:    noArgs,
		PreRunE: func(*cobra.Command, []string) error { return o.validate() },
		RunE:    func(cmd *cobra.Command, _ []string) error { return runTPCC(cmd.Context(), a, &o, cmd) },
	}
	f := c.Flags()
	o.target.flags(f, true)
	f.StringVar(&o.vus, "vus", "1", "virtual users per step, a comma-separated list sweeps (1,2,4,8)")
	f.DurationVar(&o.rampup, "rampup", 30*time.Second, "warm-up before each measured window")
	f.DurationVar(&o.duration, "duration", 2*time.Minute, "measured window of each step")
	f.Float64Var(&o.rate, "rate", 0, "fixed rate of transactions per second for the whole step (0: as fast as possible)")
	f.StringVar(&o.mode, "mode", string(tpcc.ModeFunctions), "functions (one server-side call per transaction) or client (statements from the client)")
	f.StringVar(&o.compare, "compare", "", "compare variants at every step: routing=off,on")
	f.Int64Var(&o.seed, "seed", 1, "seed of all randomness of the run")
	f.BoolVar(&o.allWarehouses, "all-warehouses", false, "draw every transaction's warehouse from all warehouses")
	f.BoolVar(&o.keying, "keying", false, "add the specification's keying and think times")
	f.BoolVar(&o.readIntent, "read-intent", false, "run Order-Status and Stock-Level on a read-intent session")
	f.BoolVar(&o.check, "check", false, "run the consistency conditions after the run (exit 1 if one fails)")
	f.StringVar(&o.results, "results", "results", "folder for the run's result folder")
	f.IntVar(&o.repeat, "repeat", 1, "run every step this many times; the table shows medians")
	f.Int64Var(&o.maxErrors, "max-errors", 1000, "stop a step after this many failed transactions (0: no limit)")
	o.analysis.register(f)
	staleProbeFlag(f, &o.staleProbe)
	return c
}

// plan validates the options and returns the sweep, reporting every problem at once.
func (o *tpccRunOptions) plan() (runner.Sweep, tpcc.Mode, error) {
	var errs []error
	sw := runner.Sweep{Seed: o.seed, Repeat: o.repeat}
	if o.repeat < 1 || o.repeat > 100 {
		errs = append(errs, agerr.BadInputf("--repeat %d: must be 1..100", o.repeat))
	}
	vus, err := runner.ParseInts("--vus", o.vus, 1)
	errs = append(errs, err)
	if err == nil {
		vals := make([]string, len(vus))
		for i, v := range vus {
			vals[i] = strconv.Itoa(v)
		}
		sw.Axes = []runner.Axis{{Name: "vus", Values: vals}}
	}
	mode, err := tpcc.ParseMode(o.mode)
	errs = append(errs, err)
	if o.compare != "" {
		ax, err := experiment.ParseRoutingCompare(o.compare)
		errs = append(errs, err)
		sw.Compare = ax
		o.readIntent = true
	}
	if o.rampup < 0 {
		errs = append(errs, agerr.BadInputf("--rampup %v: must not be negative", o.rampup))
	}
	if o.duration <= 0 {
		errs = append(errs, agerr.BadInputf("--duration %v: must be positive", o.duration))
	}
	if o.rate < 0 {
		errs = append(errs, agerr.BadInputf("--rate %v: must not be negative", o.rate))
	}
	if o.maxErrors < 0 {
		errs = append(errs, agerr.BadInputf("--max-errors %d: must not be negative", o.maxErrors))
	}
	errs = append(errs, seedErr(o.seed))
	_, err = o.analysis.slos()
	errs = append(errs, err)
	return sw, mode, agerr.Join(errs...)
}

// validate checks the options without connecting or reading a cluster (cobra's PreRunE,
// and a plan's check) and keeps the sweep and the mode.
func (o *tpccRunOptions) validate() error {
	sw, mode, err := o.plan()
	o.sweep, o.parsed = sw, mode
	_, perr := experiment.StaleProbeMode(o.staleProbe, o.readIntent, nil, sw.Compare != nil)
	return agerr.Join(err, perr, target.CheckSpec(o.target.spec))
}

func runTPCC(ctx context.Context, a *app, o *tpccRunOptions, cmd *cobra.Command) error {
	sw, mode := o.sweep, o.parsed
	r, err := o.target.resolve(a)
	if err != nil {
		return err
	}
	tgt := r.tgt
	if o.readIntent && len(tgt.Standbys) == 0 && tgt.Listener == "" {
		return agerr.BadInputf("--read-intent: needs a standby or a listener (--cluster with standbys, --standby or --listener)")
	}
	if sw.Compare != nil {
		if err := experiment.CheckRoutingTarget(tgt); err != nil {
			return err
		}
	}
	l := o.experiment(cmd, tgt, sw)
	if l.StaleProbe, err = experiment.StaleProbeMode(o.staleProbe, o.readIntent, tgt, sw.Compare != nil); err != nil {
		return err
	}
	w := &tpcc.Workload{Primary: r.primary, Mode: mode, ReadIntent: o.readIntent,
		AllWarehouses: o.allWarehouses, Keying: o.keying, Seed: uint64(o.seed), OwnWrites: o.readIntent && l.StaleProbe != ""}
	tr, err := experiment.StartTPCC(ctx, l, w, experiment.Given{Load: o.vus, Compare: o.compare})
	defer l.Close()
	if err != nil {
		return err
	}
	defer tr.Close(ctx)
	meta, conn := tr.Meta, tr.Conn
	fmt.Fprintf(a.stderr, "tpcc run: %d warehouses, %s mode, %d step(s) of %v ramp-up + %v\n",
		meta.Warehouses, mode, len(l.Plan()), o.rampup, o.duration)
	prog := newProgress(a, len(l.Plan()), "tx")
	l.Workload, l.Samplers = w, tr.Samplers()
	out, runErr := experiment.Run(ctx, l, setup(cmd, o.results, prog.event))
	prog.clear()
	if out == nil {
		return runErr
	}
	render.TPCC(a.stdout, render.TPCCSetup{Warehouses: meta.Warehouses, Mode: string(mode), Variants: sw.Compare.Variants(), Repeat: sw.Repeat}, out.Result.Steps)
	render.Stale(a.stdout, out.Result)
	render.Analysis(a.stdout, out.Analysis)
	if out.Path == "" {
		return runErr
	}
	fmt.Fprintf(a.stdout, "result: %s\n", out.Path)
	if runErr != nil {
		return runErr
	}
	if o.check {
		fmt.Fprintln(a.stdout)
		return runCheck(ctx, a.stdout, conn)
	}
	return nil
}

// experiment is the run as an experiment: the VU sweep on the target, sampled and analysed.
func (o *tpccRunOptions) experiment(cmd *cobra.Command, tgt *target.Target, sw runner.Sweep) *experiment.Load {
	slos, _ := o.analysis.slos() // checked by plan
	return &experiment.Load{Command: "tpcc run", Target: tgt, Database: o.target.spec.Database, Intent: target.ReadWrite, Sweep: sw,
		Step:   runner.StepSpec{Duration: o.duration, Rampup: o.rampup, Rate: o.rate, MaxErrors: o.maxErrors},
		Sample: o.analysis.sampling(), Analyse: true,
		AnalysisOptions: analyze.Options{LoadName: "VUs", Unit: "tx/s", SLOs: slos}}
}
