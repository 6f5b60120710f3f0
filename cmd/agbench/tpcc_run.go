package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/runner"
	"github.com/agbench/agbench/internal/target"
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
		ax, err := runner.ParseCompare(o.compare)
		errs = append(errs, err)
		if err == nil {
			if ax.Name != tpcc.ParamRouting {
				errs = append(errs, agerr.BadInputf("--compare %q: tpcc compares routing=off,on", o.compare))
			}
			for _, v := range ax.Values {
				if v != "on" && v != "off" {
					errs = append(errs, agerr.BadInputf("--compare %q: routing is on or off, not %q", o.compare, v))
				}
			}
			sw.Compare = ax
			o.readIntent = true
		}
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

func maxVUs(sw runner.Sweep) int {
	m := 0
	for _, ax := range sw.Axes {
		for _, v := range ax.Values {
			n, _ := strconv.Atoi(v)
			m = max(m, n)
		}
	}
	return m
}

func runTPCC(ctx context.Context, a *app, o *tpccRunOptions, cmd *cobra.Command) error {
	sw, mode, err := o.plan()
	r, terr := o.target.resolve(a)
	if err = agerr.Join(err, terr); err != nil {
		return err
	}
	tgt := r.tgt
	if o.readIntent && len(tgt.Standbys) == 0 && tgt.Listener == "" {
		return agerr.BadInputf("--read-intent: needs a standby or a listener (--cluster with standbys, --standby or --listener)")
	}
	if sw.Compare != nil && (tgt.Primary == "" || tgt.Listener != "") {
		return agerr.BadInputf("--compare routing=off,on starts its own listeners in front of the servers: give --cluster, or --primary and --standby, not --listener")
	}
	w := &tpcc.Workload{Primary: r.primary, Mode: mode, ReadIntent: o.readIntent,
		AllWarehouses: o.allWarehouses, Keying: o.keying, Seed: uint64(o.seed)}
	meta, err := w.Prepare(ctx)
	if err != nil {
		return err
	}
	// Read-intent sessions: through an in-process listener per routing variant (--compare),
	// else to the listener with read intent, or to the standbys in turn.
	var routes *loadPlan
	if sw.Compare != nil {
		routes = &loadPlan{sweep: sw, tgt: tgt, routing: true}
		if err := routes.startRouting(ctx); err != nil {
			return err
		}
		defer routes.stopRouting()
		if err := routes.waitRoutes(ctx); err != nil {
			return err
		}
	}
	w.ReadConfig = func(params map[string]string, vu int) (*pgx.ConnConfig, error) {
		cs := tgt.ConnString(target.ReadOnly, vu)
		if routes != nil {
			cs = target.WithIntent(routes.routes[params[tpcc.ParamRouting]], target.ReadOnly)
		}
		return tpcc.ConnConfig(cs, "read-intent session")
	}
	if o.readIntent {
		if err := tgt.WaitReplayed(ctx, 5*time.Minute); err != nil {
			return fmt.Errorf("wait for the standbys to replay the build: %w", err)
		}
	}
	conn, err := r.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	perVU := 1
	if o.readIntent && (sw.Compare != nil || len(tgt.Standbys) == 0) {
		perVU = 2 // routing off: the read-intent session is on the primary too
	}
	if err := tpcc.CheckCapacity(ctx, conn, maxVUs(sw)*perVU+1, "--vus "+o.vus); err != nil {
		return err
	}
	res := result.New("tpcc run", version, cmdArgs(cmd)) // this command's flags, also when run in-process by `agbench run`
	res.Meta.Seed = o.seed
	res.Meta.Config = map[string]any{"warehouses": meta.Warehouses, "build_seed": meta.Seed, "mode": string(mode),
		"vus": o.vus, "rampup_seconds": o.rampup.Seconds(), "duration_seconds": o.duration.Seconds(), "rate": o.rate,
		"all_warehouses": o.allWarehouses, "keying": o.keying, "read_intent": o.readIntent, "compare": o.compare,
		"run_constants": w.Constants(), "load_constants": meta.C}
	res.Meta.Server = tpcc.ServerInfo(ctx, conn)
	res.Meta.Topology = tgt.Summary()
	if routes != nil {
		res.Meta.Topology.Listener = routes.listenerAddr
	}
	dir := result.RunDir(o.results, res.Meta.Started, "tpcc run")

	smp, err := w.NewSampler(ctx)
	if err != nil {
		return err
	}
	defer smp.Close()
	samplers := []runner.Sampler{smp}
	if !o.analysis.noSamples {
		var standbys []*pgx.ConnConfig
		for _, cs := range tgt.Standbys {
			if c, err := pgx.ParseConfig(cs); err == nil {
				standbys = append(standbys, c)
			}
		}
		primary := r.primary
		if tgt.Primary == "" {
			primary = nil // only a listener: no server to sample directly
		}
		set := startSamplers(ctx, pgNodesOf(tgt.Topo, primary, standbys), nil)
		defer set.Close()
		samplers = append(samplers, set.Samplers...)
		res.Warnings = append(res.Warnings, set.Warnings...)
	}
	plan := sw.Plan()
	fmt.Fprintf(a.stderr, "tpcc run: %d warehouses, %s mode, %d step(s) of %v ramp-up + %v\n",
		meta.Warehouses, mode, len(plan), o.rampup, o.duration)
	cfg := runner.Config{
		Workload: w, Plan: plan, Seed: o.seed, Samplers: samplers,
		Spec: func(p runner.Point) runner.StepSpec {
			n, _ := strconv.Atoi(p.Params["vus"])
			return runner.StepSpec{VUs: n, Duration: o.duration, Rampup: o.rampup, Rate: o.rate, MaxErrors: o.maxErrors}
		},
		Progress: runProgress(a),
		StepDone: func(steps []result.Step) {
			res.Steps = steps
			_, _ = result.Write(dir, res)
		},
	}
	steps, runErr := runner.Run(ctx, cfg)
	if a.interactive {
		fmt.Fprintln(a.stderr)
	}
	res.Steps = steps
	res.Finish(runErr)
	slos, _ := o.analysis.slos()
	an := finishAnalysis(res, analyze.Options{LoadName: "VUs", Unit: "tx/s", SLOs: slos})
	path, werr := result.Write(dir, res)
	printTPCCRun(a.stdout, meta, mode, sw, steps)
	printAnalysis(a.stdout, an)
	if werr != nil {
		return errors.Join(runErr, fmt.Errorf("write result: %w", werr))
	}
	fmt.Fprintf(a.stdout, "result: %s\n", path)
	if runErr != nil {
		return runErr
	}
	if o.check {
		fmt.Fprintln(a.stdout)
		return runCheck(ctx, a.stdout, conn)
	}
	return nil
}

// runProgress shows the runner's ticks: one rewritten line on a terminal, a line every ten
// seconds otherwise.
func runProgress(a *app) func(runner.Progress) {
	var last time.Time
	return func(p runner.Progress) {
		if !a.interactive && time.Since(last) < 10*time.Second {
			return
		}
		last = time.Now()
		phase := fmt.Sprintf("measuring %3.0fs of %.0fs", p.Elapsed.Seconds(), p.Spec.Duration.Seconds())
		if !p.Measuring {
			phase = fmt.Sprintf("ramp-up, %3.0fs left", -p.Elapsed.Seconds())
		}
		line := fmt.Sprintf("step %d/%d %s: %s, %6.0f tx/s, p99 %v, %d errors",
			p.Point.Index+1, p.Of, p.Point, phase, p.Rate, p.P99.Round(100*time.Microsecond), p.Errors)
		if a.interactive {
			fmt.Fprintf(a.stderr, "\r%-100s", line)
		} else {
			fmt.Fprintln(a.stderr, line)
		}
	}
}

func ms(us int64) string { return fmt.Sprintf("%.1fms", float64(us)/1000) }

func num(v float64) string {
	s := strconv.FormatInt(int64(v+0.5), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && c != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

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
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	if sw.Compare != nil {
		group := "\t"
		for _, v := range variants {
			group += v + "\t\t\t\t"
		}
		fmt.Fprintln(tw, group)
	}
	head := "VUs\t" + strings.Repeat("NOPM\tTPM\tNEWORD p95\tp99\t", len(variants))
	fmt.Fprintln(tw, head+"server NOPM\tserver TPM\t")
	for _, n := range vusList {
		line := fmt.Sprintf("%d\t", n)
		var srvNOPM, srvTPM []string
		for _, v := range variants {
			sts := byKey[key{n, v}]
			if len(sts) == 0 {
				line += "-\t-\t-\t-\t"
				continue
			}
			med := func(f func(*result.Step) float64) float64 {
				vals := make([]float64, len(sts))
				for i, st := range sts {
					vals[i] = f(st)
				}
				return median(vals)
			}
			lat := func(q func(result.Hist) int64) func(*result.Step) float64 {
				return func(st *result.Step) float64 {
					if no := st.Ops[tpcc.NewOrder.String()]; no != nil {
						return float64(q(no.Latency))
					}
					return 0
				}
			}
			counter := func(name string) func(*result.Step) float64 {
				return func(st *result.Step) float64 { return st.Counters[name] }
			}
			line += num(med(counter(tpcc.CounterNOPM))) + "\t" + num(med(counter(tpcc.CounterTPM))) + "\t" +
				ms(int64(med(lat(func(h result.Hist) int64 { return h.P95 })))) + "\t" +
				ms(int64(med(lat(func(h result.Hist) int64 { return h.P99 })))) + "\t"
			srvNOPM = append(srvNOPM, num(med(counter(tpcc.CounterServerNOPM))))
			srvTPM = append(srvTPM, num(med(counter(tpcc.CounterServerTPM))))
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
		st := &steps[i]
		variant := ""
		if st.Variant != "" {
			variant = " " + st.Variant
		}
		fmt.Fprintf(w, "\nstep %d: %d VUs%s, %.0fs window, client CPU %.0fµs/tx (%.0f%% of the host)\n", st.Index+1, st.VUs,
			variant, st.Window.Seconds(), st.Client.PerOpMicros, 100*st.Client.Utilisation)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
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
				num(n), num(st.Counters[tpcc.CounterReadOnPrimary])))
		}
		if b, ok := st.Counters[tpcc.CounterLagBytesMax]; ok {
			notes = append(notes, fmt.Sprintf("max replay lag %s bytes, %.3fs", num(b), st.Counters[tpcc.CounterLagSecondsMax]))
		}
		var codes []string
		for name, v := range st.Counters {
			if code, ok := tpcc.ParseSQLStateCounter(name); ok {
				codes = append(codes, fmt.Sprintf("%s×%s", code, num(v)))
			}
		}
		sort.Strings(codes)
		if len(codes) > 0 {
			notes = append(notes, "errors by SQLSTATE: "+strings.Join(codes, " "))
		}
		notes = append(notes, fmt.Sprintf("rolled-back new orders %s; server NOPM %s, TPM %s (client on the primary %s)",
			num(st.Counters[tpcc.CounterRolledBack]), num(st.Counters[tpcc.CounterServerNOPM]),
			num(st.Counters[tpcc.CounterServerTPM]), num(st.Counters[tpcc.CounterPrimaryTPM])))
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
}

func containsInt(list []int, n int) bool {
	for _, v := range list {
		if v == n {
			return true
		}
	}
	return false
}

// median of the values (the mean of the middle two for an even count).
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}
