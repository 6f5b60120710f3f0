package experiment

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/runner"
	"github.com/agbench/agbench/internal/target"
	"github.com/agbench/agbench/internal/workload/tpcc"
)

func init() {
	Register(Meta{Name: "tpcc run", Description: "Run the TPC-C mix with a sweep of virtual users; NOPM, TPM and latency per transaction",
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
latency).

--terminals N runs TPC-C's real mode: N emulated terminals, each keying, submitting,
thinking (clause 5.2.5) and dealing from its deck, served by a transaction monitor inside
agbench over a pool of --sessions database sessions (the step's VUs). Latencies are then the
specification's response times, from the terminal's submission, the wait in the monitor's
queue included (also shown apart); the table says tpmC per warehouse against the 12.86 bound
and whether the run kept ten terminals per warehouse. --think-scale below 1 shortens keying
and think times for a driver-capacity run, outside the specification.

Every run writes results/<time>-tpcc-run/result.json, also when cut short.`,
		Flags: func(fs *pflag.FlagSet) Builder {
			s := &TPCCRun{}
			s.register(fs)
			return func([]string) (Experiment, error) { return s, nil }
		}})
}

// TPCCRun is a tpcc run's spec: the TPC-C mix on a built schema, a sweep of virtual users.
// After Run, Meta is the schema's and Consistency the consistency conditions' outcome
// (with --check, when the run completed).
type TPCCRun struct {
	Target        target.Spec
	VUs           string
	Rampup        time.Duration
	Duration      time.Duration
	Rate          float64
	Mode          string
	Compare       string
	Seed          int64
	AllWarehouses bool
	Keying        bool
	Terminals     int
	Sessions      int
	ThinkScale    float64
	ReadIntent    bool
	StaleProbe    string
	Check         bool
	Results       string
	MaxErrors     int64
	Repeat        int
	Analyse       AnalysisFlags
	Segments      SegmentFlags

	Meta        *tpcc.Meta
	Consistency *TPCCConsistency
}

// TPCCConsistency is what tpcc run --check found after the run.
type TPCCConsistency struct {
	Results []tpcc.CheckResult
	Err     error
}

func (s *TPCCRun) register(f *pflag.FlagSet) {
	TPCCTargetFlags(f, &s.Target, true)
	f.StringVar(&s.VUs, "vus", "1", "virtual users per step, a comma-separated list sweeps (1,2,4,8)")
	f.DurationVar(&s.Rampup, "rampup", 30*time.Second, "warm-up before each measured window")
	f.DurationVar(&s.Duration, "duration", 2*time.Minute, "measured window of each step")
	f.Float64Var(&s.Rate, "rate", 0, "fixed rate of transactions per second for the whole step (0: as fast as possible)")
	f.StringVar(&s.Mode, "mode", string(tpcc.ModeFunctions), "functions (one server-side call per transaction) or client (statements from the client)")
	f.StringVar(&s.Compare, "compare", "", "compare variants at every step: routing=off,on")
	f.Int64Var(&s.Seed, "seed", 1, "seed of all randomness of the run")
	f.BoolVar(&s.AllWarehouses, "all-warehouses", false, "draw every transaction's warehouse from all warehouses")
	f.BoolVar(&s.Keying, "keying", false, "add the specification's keying and think times")
	f.IntVar(&s.Terminals, "terminals", 0, "emulated terminals with keying and think times, served over a pool of --sessions (0: --vus without terminals)")
	f.IntVar(&s.Sessions, "sessions", 0, "with --terminals: the database sessions serving them (0: one per 20 terminals, at most 50)")
	f.Float64Var(&s.ThinkScale, "think-scale", 1, "with --terminals: multiply keying and think times (below 1: a driver-capacity run, outside the specification)")
	f.BoolVar(&s.ReadIntent, "read-intent", false, "run Order-Status and Stock-Level on a read-intent session")
	f.BoolVar(&s.Check, "check", false, "run the consistency conditions after the run (exit 1 if one fails)")
	f.StringVar(&s.Results, "results", "results", "folder for the run's result folder")
	f.IntVar(&s.Repeat, "repeat", 1, "run every step this many times; the table shows medians")
	f.Int64Var(&s.MaxErrors, "max-errors", 1000, "stop a step after this many failed transactions (0: no limit)")
	s.Analyse.Register(f)
	staleProbeFlag(f, &s.StaleProbe)
	s.Segments.Register(f)
}

// TPCCTargetFlags registers the target flags of the tpcc commands on f: run also takes
// standbys and a listener for its read-intent sessions.
func TPCCTargetFlags(f *pflag.FlagSet, t *target.Spec, run bool) {
	f.StringVar(&t.Cluster, "cluster", "", "target: an agbench cluster by name")
	f.StringVar(&t.Primary, "primary", "", "target: the primary's connection string (URL or key=value)")
	f.StringVarP(&t.Database, "database", "d", "", "database (default: the cluster's)")
	if run {
		f.StringArrayVar(&t.Standbys, "standby", nil, "target: a standby's connection string for read-intent sessions (repeatable)")
		f.StringVar(&t.Listener, "listener", "", "target: a listener's connection string (read-intent sessions declare their intent to it)")
	}
}

// TPCCPrimary is the connection configuration of a tpcc command's read-write sessions: the
// primary's, or the listener's when it is the only target (read-write sessions through it
// reach the primary).
func TPCCPrimary(tgt *target.Target) (*pgx.ConnConfig, error) {
	cs, flag := tgt.Primary, "--primary"
	if cs == "" {
		cs, flag = tgt.Listener, "--listener"
	}
	return tpcc.ConnConfig(cs, flag)
}

// Kind is tpcc run.
func (s *TPCCRun) Kind() string { return "tpcc run" }

// readIntent says whether the run has read-intent sessions (a routing comparison has).
func (s *TPCCRun) readIntent() bool { return s.ReadIntent || s.Compare != "" }

// Plan checks the flags and returns the sweep and the mode, every problem at once.
func (s *TPCCRun) Plan() (runner.Sweep, tpcc.Mode, error) {
	var errs []error
	sw := runner.Sweep{Seed: s.Seed, Repeat: s.Repeat}
	if s.Repeat < 1 || s.Repeat > 100 {
		errs = append(errs, agerr.BadInputf("--repeat %d: must be 1..100", s.Repeat))
	}
	seg, err := s.Segments.Parse()
	errs = append(errs, err)
	if s.Terminals != 0 || s.Sessions != 0 || s.ThinkScale != 1 {
		errs = append(errs, s.checkTerminals()...)
		// The runner's VUs are the pool's sessions (the first axis gives a step's VUs); the
		// terminals they serve are the step's other knob.
		sw.Axes = []runner.Axis{{Name: result.SessionsKnob, Values: itoas([]int{s.sessions()})},
			{Name: result.TerminalsKnob, Values: itoas([]int{s.Terminals})}}
		errs = append(errs, checkShare(seg, "--sessions", s.sessions()), checkShare(seg, "--terminals", s.Terminals))
	} else {
		vus, err := runner.ParseInts("--vus", s.VUs, 1)
		errs = append(errs, err)
		if err == nil {
			sw.Axes = []runner.Axis{{Name: "vus", Values: itoas(vus)}}
		}
		for _, n := range vus {
			errs = append(errs, checkShare(seg, "--vus", n))
		}
	}
	if s.Check && s.Segments.Given() {
		errs = append(errs, agerr.BadInputf("--check with --segment: a segment that ends first would check while the others still write; run agbench tpcc check after the segments"))
	}
	mode, err := tpcc.ParseMode(s.Mode)
	errs = append(errs, err)
	if s.Compare != "" {
		ax, err := ParseRoutingCompare(s.Compare)
		errs = append(errs, err)
		sw.Compare = ax
	}
	if s.Rampup < 0 {
		errs = append(errs, agerr.BadInputf("--rampup %v: must not be negative", s.Rampup))
	}
	if s.Duration <= 0 {
		errs = append(errs, agerr.BadInputf("--duration %v: must be positive", s.Duration))
	}
	if s.Rate < 0 {
		errs = append(errs, agerr.BadInputf("--rate %v: must not be negative", s.Rate))
	}
	if s.MaxErrors < 0 {
		errs = append(errs, agerr.BadInputf("--max-errors %d: must not be negative", s.MaxErrors))
	}
	if s.Seed < 0 {
		errs = append(errs, agerr.BadInputf("--seed %d: must be 0 or more", s.Seed))
	}
	_, err = s.Analyse.SLOs()
	errs = append(errs, err)
	_, err = s.Analyse.HostMetrics()
	errs = append(errs, err)
	return sw, mode, agerr.Join(errs...)
}

// Validate checks the flags without connecting or reading a cluster.
func (s *TPCCRun) Validate() error {
	sw, _, err := s.Plan()
	_, perr := StaleProbeMode(s.StaleProbe, s.readIntent(), nil, sw.Compare != nil)
	return agerr.Join(err, perr, target.CheckSpec(s.Target))
}

// Steps is how many steps the run has.
func (s *TPCCRun) Steps() int {
	sw, _, _ := s.Plan()
	return len(sw.Plan())
}

// Sections are the load's.
func (s *TPCCRun) Sections() []string { return (&Load{}).Sections() }

// Analysis is the load's: VUs (a run of terminals: the pool's sessions) against
// transactions per second.
func (s *TPCCRun) Analysis() (analyze.Options, bool) {
	slos, _ := s.Analyse.SLOs()
	return analyze.Options{LoadName: s.loadName(), Unit: "tx/s", SLOs: slos}, true
}

// loadName names what the runner's VUs are: the pool's sessions in a run of terminals.
func (s *TPCCRun) loadName() string {
	if s.Terminals > 0 {
		return result.SessionsKnob
	}
	return "VUs"
}

// CheckMerged compares each merged step's client NOPM and TPM, the segments' sums, with the
// server's counts, which every segment read of the whole run: once, as a run of one load
// generator does. A merge that lacks a segment, or a step a segment did not finish, has
// sums short of the server's by what is missing, and says so already: not compared. The
// segments' results (segs) say what the counts can differ by (tpcc.MergedDisagreements).
func (s *TPCCRun) CheckMerged(m *result.Result, segs []*result.Result) {
	if m.Meta.Merged == nil || len(m.Meta.Merged.Missing) > 0 {
		return
	}
	for i := range m.Steps {
		if st := &m.Steps[i]; st.Complete {
			st.Warnings = append(st.Warnings, tpcc.MergedDisagreements(st.Counters, st.Window.Seconds(), segmentSteps(segs, i))...)
		}
	}
}

// segmentSteps is each segment's step i as the merged cross-check needs it, the lowest
// segment (whose server counts the merge kept) first.
func segmentSteps(segs []*result.Result, i int) []tpcc.SegmentStep {
	var out []tpcc.SegmentStep
	for _, r := range segs {
		if r.Meta.Segment == nil || i >= len(r.Steps) {
			continue
		}
		st := &r.Steps[i]
		sessions := st.VUs
		if ts, err := st.Terminals(); err == nil && ts != nil {
			sessions = ts.Sessions // the step's VUs were the monitor's sessions
		}
		out = append(out, tpcc.SegmentStep{Index: r.Meta.Segment.Index, NOPM: st.Counters[tpcc.CounterNOPM], Window: st.Window, Sessions: sessions})
	}
	slices.SortFunc(out, func(a, b tpcc.SegmentStep) int { return a.Index - b.Index })
	return out
}

// load resolves the target and returns the run's load and workload.
func (s *TPCCRun) load(home string) (*Load, *tpcc.Workload, error) {
	sw, mode, err := s.Plan()
	if err != nil {
		return nil, nil, err
	}
	tgt, err := target.Resolve(home, s.Target)
	if err != nil {
		return nil, nil, err
	}
	primary, err := TPCCPrimary(tgt)
	if err != nil {
		return nil, nil, err
	}
	if s.readIntent() && len(tgt.Standbys) == 0 && tgt.Listener == "" {
		return nil, nil, agerr.BadInputf("--read-intent: needs a standby or a listener (--cluster with standbys, --standby or --listener)")
	}
	if sw.Compare != nil {
		if err := CheckRoutingTarget(tgt); err != nil {
			return nil, nil, err
		}
	}
	slos, _ := s.Analyse.SLOs()
	l := &Load{Command: s.Kind(), Target: tgt, Database: s.Target.Database, Intent: target.ReadWrite, ReadSessions: s.readIntent(), Sweep: sw,
		Step:   runner.StepSpec{Duration: s.Duration, Rampup: s.Rampup, Rate: s.Rate, MaxErrors: s.MaxErrors},
		Sample: s.Analyse.Sampling(), Analyse: true,
		AnalysisOptions: analyze.Options{LoadName: s.loadName(), Unit: "tx/s", SLOs: slos},
		SegmentRun:      s.Segments.Run, SegmentTimeout: s.Segments.Timeout}
	l.Segment, _ = s.Segments.Parse()
	l.Hosts, _ = s.Analyse.HostMetrics() // checked by Plan
	if l.StaleProbe, err = StaleProbeMode(s.StaleProbe, s.readIntent(), tgt, sw.Compare != nil); err != nil {
		return nil, nil, err
	}
	w := &tpcc.Workload{Primary: primary, Mode: mode, ReadIntent: s.readIntent(), AllWarehouses: s.AllWarehouses,
		Keying: s.Keying, Seed: uint64(s.Seed), OwnWrites: s.readIntent() && l.StaleProbe != "",
		Terminals: s.Terminals, ThinkScale: s.ThinkScale}
	if s.Terminals > 0 {
		w.Keying = true
	}
	return l, w, nil
}

// Run checks the target and the schema, starts what the run needs (startTPCC), runs the
// steps and, with --check and a run that completed, the consistency conditions.
func (s *TPCCRun) Run(ctx context.Context, r *Running) error {
	l, w, err := s.load(r.Home())
	if err != nil {
		return err
	}
	g := given{Load: s.VUs, Compare: s.Compare}
	if s.Terminals > 0 {
		g.Load, g.LoadFlag = strconv.Itoa(s.sessions()), "--sessions"
	}
	tr, err := startTPCC(ctx, l, w, g)
	defer l.Close()
	if err != nil {
		return err
	}
	defer tr.Close(ctx)
	s.Meta = tr.Meta
	if err := checkShare(l.Segment, "warehouses (of the schema)", tr.Meta.Warehouses); err != nil {
		return err
	}
	r.Emit(Log{Line: fmt.Sprintf("tpcc run: %d warehouses, %s mode, %d step(s) of %v ramp-up + %v",
		tr.Meta.Warehouses, w.Mode, len(l.Plan()), s.Rampup, s.Duration)})
	if !l.Segment.Whole() {
		r.Emit(Log{Line: fmt.Sprintf("tpcc run: segment %d of %d: its NOPM and TPM are its share and the server's counts the whole run's; "+
			"they are compared by agbench merge, on the segments' sums", l.Segment.Index, l.Segment.Of)})
	}
	l.Workload, l.Samplers = w, tr.Samplers()
	if err := l.Run(ctx, r); err != nil {
		return err
	}
	if s.Check {
		res, err := tpcc.Check(ctx, tr.Conn)
		s.Consistency = &TPCCConsistency{Results: res, Err: err}
	}
	return nil
}
