package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/render"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/runner"
	"github.com/agbench/agbench/internal/stats"
	"github.com/agbench/agbench/internal/table"
	"github.com/agbench/agbench/internal/target"
	"github.com/agbench/agbench/internal/units"
	"github.com/agbench/agbench/internal/workload/tpcc"
)

func init() { tpccRunCmd = newTPCCRunCmd }

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
}

func newTPCCRunCmd(a *app) *cobra.Command {
	var o tpccRunOptions
	c := &cobra.Command{
		Use:   "run",
		Short: "Run the TPC-C mix with a sweep of virtual users; NOPM, TPM and latency per transaction",
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
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runTPCC(cmd.Context(), a, &o, cmd) },
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
	return validates(c)
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

func runTPCC(ctx context.Context, a *app, o *tpccRunOptions, cmd *cobra.Command) error {
	sw, mode, err := o.plan()
	if validating(ctx) { // agbench run checks a plan: the cluster may not exist yet
		_, perr := staleProbeMode(o.staleProbe, o.readIntent, nil, sw.Compare != nil)
		return agerr.Join(err, perr, target.CheckSpec(o.target.spec))
	}
	r, terr := o.target.resolve(a)
	if err = agerr.Join(err, terr); err != nil {
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
	if l.StaleProbe, err = staleProbeMode(o.staleProbe, o.readIntent, tgt, sw.Compare != nil); err != nil {
		return err
	}
	w := &tpcc.Workload{Primary: r.primary, Mode: mode, ReadIntent: o.readIntent,
		AllWarehouses: o.allWarehouses, Keying: o.keying, Seed: uint64(o.seed), OwnWrites: o.readIntent && l.StaleProbe != ""}
	tr, err := experiment.StartTPCC(ctx, l, w, experiment.TPCCNames{VUs: o.vus, Compare: o.compare})
	defer l.Close()
	if err != nil {
		return err
	}
	defer tr.Close(ctx)
	meta, conn := tr.Meta, tr.Conn
	fmt.Fprintf(a.stderr, "tpcc run: %d warehouses, %s mode, %d step(s) of %v ramp-up + %v\n",
		meta.Warehouses, mode, len(l.Plan()), o.rampup, o.duration)
	prog := newProgress(a, len(l.Plan()), "tx")
	out, runErr := l.Run(ctx, w, experiment.Hooks{Progress: prog.show, StepDone: prog.done, Samplers: tr.Samplers()})
	prog.clear()
	if out == nil {
		return runErr
	}
	printTPCCRun(a.stdout, meta, mode, sw, out.Result.Steps)
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
	slos, _ := o.analysis.slos()                                                       // checked by plan
	return &experiment.Load{Command: "tpcc run", Version: version, Args: cmdArgs(cmd), // this command's flags, also when run in-process by `agbench run`
		Target: tgt, Database: o.target.spec.Database, Intent: target.ReadWrite, Sweep: sw,
		Step:    runner.StepSpec{Duration: o.duration, Rampup: o.rampup, Rate: o.rate, MaxErrors: o.maxErrors},
		Results: o.results, Sample: o.analysis.sampling(), Analyse: true,
		Analysis: analyze.Options{LoadName: "VUs", Unit: "tx/s", SLOs: slos}}
}

func ms(us int64) string { return fmt.Sprintf("%.1fms", float64(us)/1000) }

func groupInt(v float64) string { return units.GroupInt(int64(v + 0.5)) }

// printTPCCRun prints the articles' table (VUs | NOPM | TPM | NEWORD p95 | p99, per
// variant side by side), the server's cross-check, then each step's transactions.
func printTPCCRun(w io.Writer, meta *tpcc.Meta, mode tpcc.Mode, sw runner.Sweep, steps []result.Step) {
	fmt.Fprintf(w, "\ntpcc: %d warehouses, %s mode\n\n", meta.Warehouses, mode)
	variants := []string{""}
	if sw.Compare != nil {
		variants = nil
		for _, v := range sw.Compare.Values {
			variants = append(variants, sw.Compare.Name+"="+v)
		}
	}
	type key struct {
		vus     int
		variant string
	}
	byKey := map[key][]*result.Step{}
	var vusList []int
	for i := range steps {
		st := &steps[i]
		if !containsInt(vusList, st.VUs) {
			vusList = append(vusList, st.VUs)
		}
		k := key{st.VUs, st.Variant}
		byKey[k] = append(byKey[k], st)
	}
	tw := table.NewWriter(w, table.Right)
	cols, rate := "NOPM\tTPM\tNEWORD p95\tp99\t", table.HasRate(&result.Result{Steps: steps})
	if rate {
		cols += rateHeads()
	}
	if sw.Compare != nil {
		group := "\t"
		for _, v := range variants {
			group += v + strings.Repeat("\t", strings.Count(cols, "\t"))
		}
		fmt.Fprintln(tw, group)
	}
	head := "VUs\t" + strings.Repeat(cols, len(variants))
	fmt.Fprintln(tw, head+"server NOPM\tserver TPM\t")
	for _, n := range vusList {
		line := fmt.Sprintf("%d\t", n)
		var srvNOPM, srvTPM []string
		for _, v := range variants {
			sts := byKey[key{n, v}]
			if len(sts) == 0 {
				line += strings.Repeat(table.Absent+"\t", strings.Count(cols, "\t"))
				continue
			}
			cells, nopm, tpm := tpccCells(sts)
			line += cells
			if rate {
				line += rateCells(sts)
			}
			srvNOPM, srvTPM = append(srvNOPM, nopm), append(srvTPM, tpm)
		}
		fmt.Fprintln(tw, line+strings.Join(srvNOPM, " / ")+"\t"+strings.Join(srvTPM, " / ")+"\t")
	}
	tw.Flush()
	fmt.Fprintln(w, "(server: the districts' next order ids and pg_stat_database commits+rollbacks on the primary"+
		map[bool]string{true: ", per variant", false: ""}[sw.Compare != nil]+")")
	if sw.Repeat > 1 {
		fmt.Fprintf(w, "(medians of %d repeats)\n", sw.Repeat)
	}

	for i := range steps {
		printTPCCStep(w, &steps[i])
	}
}

// tpccCells are the cells of one row and variant of the articles' table, medians of the
// repeats: NOPM, TPM, New-Order p95 and p99, and the server's NOPM and TPM apart. A figure
// absent from every repeat (not measured) is "–"; the median is of the repeats that have it.
func tpccCells(sts []*result.Step) (cells, srvNOPM, srvTPM string) {
	median := func(f func(*result.Step) (float64, bool), format func(float64) string) string {
		var vals []float64
		for _, st := range sts {
			if v, ok := f(st); ok {
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			return "–"
		}
		return format(stats.Median(vals))
	}
	counter := func(name string) string {
		return median(func(st *result.Step) (float64, bool) { v, ok := st.Counters[name]; return v, ok }, groupInt)
	}
	latency := func(q func(result.Hist) int64) string {
		return median(func(st *result.Step) (float64, bool) {
			if no := st.Ops[tpcc.NewOrder.String()]; no != nil && no.Count > 0 {
				return float64(q(no.Latency)), true
			}
			return 0, false
		}, func(us float64) string { return ms(int64(us)) })
	}
	cells = counter(tpcc.CounterNOPM) + "\t" + counter(tpcc.CounterTPM) + "\t" +
		latency(func(h result.Hist) int64 { return h.P95 }) + "\t" + latency(func(h result.Hist) int64 { return h.P99 }) + "\t"
	return cells, counter(tpcc.CounterServerNOPM), counter(tpcc.CounterServerTPM)
}

// rateHeads and rateCells are a fixed-rate run's columns of the articles' table
// (table.RateColumns): the rate asked, the transactions started per second, late starts.
func rateHeads() string {
	h := ""
	for _, c := range table.RateColumns() {
		h += c.Header + "\t"
	}
	return h
}

func rateCells(sts []*result.Step) string {
	out := ""
	for _, c := range table.RateColumns() {
		out += table.StepsCell(sts, c) + "\t"
	}
	return out
}

// printTPCCStep prints one step's transactions, where its reads landed, its faults, its
// server cross-check, warnings and whether it was cut short.
func printTPCCStep(w io.Writer, st *result.Step) {
	variant := ""
	if st.Variant != "" {
		variant = " " + st.Variant
	}
	fmt.Fprintf(w, "\nstep %d: %d VUs%s, %.0fs window, client CPU %.0fµs/tx (%.0f%% of the host)\n", st.Index+1, st.VUs,
		variant, st.Window.Seconds(), st.Client.PerOpMicros, 100*st.Client.Utilisation)
	tw := table.NewWriter(w, table.Right)
	fmt.Fprintln(tw, "tx\tcount\terrors\tretries\tp50\tp95\tp99\tp99.9\tmax\t")
	for _, k := range tpcc.Kinds {
		op := st.Ops[k.String()]
		if op == nil {
			continue
		}
		h := op.Latency
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t\n", k, op.Count, op.Errors, op.Retries,
			ms(h.P50), ms(h.P95), ms(h.P99), ms(h.P999), ms(h.Max))
	}
	tw.Flush()
	var notes []string
	if n, ok := st.Counters[tpcc.CounterReadOnStandby]; ok {
		notes = append(notes, fmt.Sprintf("read transactions on a standby %s, on the primary %s",
			groupInt(n), groupInt(st.Counters[tpcc.CounterReadOnPrimary])))
	}
	if b, ok := st.Counters[tpcc.CounterLagBytesMax]; ok {
		secs := "– s (pg_stat_replication's replay_lag was NULL at every read: not measured)"
		if v, ok := st.Counters[tpcc.CounterLagSecondsMax]; ok {
			secs = fmt.Sprintf("%.3fs", v)
		}
		notes = append(notes, fmt.Sprintf("max replay lag %s bytes, %s", groupInt(b), secs))
	}
	notes = append(notes, render.StepFaults(st)...)
	notes = append(notes, fmt.Sprintf("rolled-back new orders %s; server NOPM %s, TPM %s (client on the primary %s)",
		optNum(st.Counters, tpcc.CounterRolledBack), optNum(st.Counters, tpcc.CounterServerNOPM),
		optNum(st.Counters, tpcc.CounterServerTPM), optNum(st.Counters, tpcc.CounterPrimaryTPM)))
	for _, n := range notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
	for _, warn := range st.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warn)
	}
	if !st.Complete {
		fmt.Fprintf(w, "  incomplete: %s\n", st.IncompleteReason)
	}
}

// optNum is a counter as groupInt shows it, or "–" when the step does not have it.
func optNum(c map[string]float64, name string) string {
	if v, ok := c[name]; ok {
		return groupInt(v)
	}
	return "–"
}

func containsInt(list []int, n int) bool {
	for _, v := range list {
		if v == n {
			return true
		}
	}
	return false
}
