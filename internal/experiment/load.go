package experiment

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/runner"
	"github.com/agbench/agbench/internal/sample"
	"github.com/agbench/agbench/internal/segment"
	"github.com/agbench/agbench/internal/target"
	"github.com/agbench/agbench/internal/workload"
	"github.com/agbench/agbench/internal/workload/pgops"
)

// Load is an experiment that drives a workload through the runner's step engine (stress,
// scan, tpcc run): a target, a sweep whose first axis is the load (threads, VUs), an
// optional routing comparison, repeats, sampling beside every step and the analysis at the
// end. Fill it, Start it, make the workload with Connector / ConnString, set Workload, run
// it with experiment.Run, and Close it.
type Load struct {
	// Command names the command in the result ("stress", "scan", "tpcc run").
	Command string
	// Target is where the sessions go; Database overrides a cluster's database for the
	// samplers ("" keeps it).
	Target   *target.Target
	Database string
	// Intent is the sessions' intent when no routing is compared.
	Intent target.Intent
	// Sweep is the steps × variants × repeats; its first axis gives each step's VUs.
	Sweep runner.Sweep
	// Step is the shape of every step (VUs are taken from the sweep).
	Step runner.StepSpec
	// Sample starts the OS and database samplers beside every measured window; Restarts
	// says the servers restart between steps, so no database sampler can follow them.
	Sample, Restarts bool
	// Analyse attaches the analysis (knee, Little's law, validity) at the end.
	Analyse         bool
	AnalysisOptions analyze.Options
	// Config is the command's effective configuration for the result.
	Config map[string]any
	// StaleProbe, when set (result.StaleEventual, result.StaleCausal or result.StaleBoth:
	// the two side by side), runs the read-after-write probe beside every measured window
	// (result.StaleStep).
	StaleProbe string
	// Workload is what every VU runs; Samplers are its own samplers, run beside the
	// experiment's.
	Workload workload.Workload
	Samplers []runner.Sampler

	// Hosts say where the host figures of nodes on other hosts come from (their
	// node_exporter, or a Prometheus server), read beside every measured window.
	Hosts HostMetrics

	// ReadSessions is set when sessions other than the VUs' own declare read intent (tpcc's
	// second session, --read-intent) though Intent is read-write.
	ReadSessions bool

	// Segment is the share of the load this run runs when it is one segment of several load
	// generators; SegmentRun names the run they share ("": made from the command line) and
	// SegmentTimeout bounds the wait for the others at each step's start.
	Segment        segment.Segment
	SegmentRun     string
	SegmentTimeout time.Duration

	routes *Routes
	// remote are the nodes' host sources, checked by Start.
	remote []sample.RemoteHost
	// notes are run-level warnings known only once steps have run (ColdCache's).
	notes []string
	// down names the standbys the run's sessions do not use that did not pass their check
	// at its start: left out of its samplers and buffer counters.
	down map[string]bool
	// addrNamed is set when a session behind the listener landed on a node that only its
	// address names (nodeName): the run then says why (AddrNamedNote).
	addrNamed atomic.Bool
}

// AddrNamedNote is the run's warning when sessions behind --listener landed on nodes named
// by their address: the listener knows their names, but tells them only on its /status.
const AddrNamedNote = "nodes named by their address: the servers behind --listener have no cluster_name, and the names " +
	"the listener gives them are on its /status (its --metrics address), which a connection string does not reach; " +
	"give --primary NAME=URL and --standby NAME=URL beside --listener to name them"

// Kind is the command that runs the load.
func (l *Load) Kind() string { return l.Command }

// Validate checks what a load needs before it connects: a target, a workload, a load axis
// and a step that ends.
func (l *Load) Validate() error {
	var errs []error
	if l.Target == nil || l.Workload == nil {
		errs = append(errs, agerr.BadInputf("%s: no target or no workload", l.Command))
	}
	if len(l.Sweep.Axes) == 0 || len(l.Plan()) == 0 {
		errs = append(errs, agerr.BadInputf("%s: no step to run", l.Command))
	}
	if l.Step.Iterations <= 0 && l.Step.Duration <= 0 {
		errs = append(errs, agerr.BadInputf("%s: a step needs iterations or a duration", l.Command))
	}
	return agerr.Join(errs...)
}

// Sections are the steps' sections: the samplers' and the stale-read probes'.
func (l *Load) Sections() []string {
	return []string{result.ExtraSample, result.ExtraStale, result.ExtraStaleCausal, result.ExtraStaleOwn}
}

// Analysis is the load's analysis, when it has one.
func (l *Load) Analysis() (analyze.Options, bool) { return l.AnalysisOptions, l.Analyse }

// Routing says whether the experiment compares routing off and on.
func (l *Load) Routing() bool { return l.Sweep.Compare != nil && l.Sweep.Compare.Name == RoutingKey }

// checkHosts resolves the host figures' sources against the target and reads each once:
// bad input when a node is not the target's or a source gives no figures.
func (l *Load) checkHosts(ctx context.Context) error {
	h := l.Hosts
	if h.Exporters == nil && h.Prometheus == "" && (l.Target.Topo == nil || !l.Sample) {
		return nil
	}
	h, err := h.Resolve(targetNodes(l.Target), l.Target.Topo)
	if err != nil {
		return err
	}
	l.remote, err = h.Sources(ctx)
	return err
}

// Start checks the target (every server is what its flag says, the database exists, the
// login is accepted: bad input otherwise) and starts what the experiment needs before any
// session: the in-process listeners of a routing comparison.
func (l *Load) Start(ctx context.Context) error {
	if err := l.checkTarget(ctx); err != nil {
		return err
	}
	if err := l.checkHosts(ctx); err != nil {
		return err
	}
	if !l.Routing() {
		return nil
	}
	if err := CheckRoutingTarget(l.Target); err != nil {
		return err
	}
	r, err := StartRoutes(ctx, l.Target, l.Sweep.Compare)
	if err != nil {
		return err
	}
	l.routes = r
	return nil
}

// Close stops what Start started.
func (l *Load) Close() error { return l.routes.Close() }

// WaitRoutes waits until the routing comparison's listeners route again (after a restart).
func (l *Load) WaitRoutes(ctx context.Context) error { return l.routes.Wait(ctx) }

// ConnString is where the session of VU vu of a step with these params connects: with a
// routing comparison, the variant's listener with read intent; else by the target's rules.
func (l *Load) ConnString(params map[string]string, vu int) string {
	if l.Routing() {
		if cs := l.routes.ConnString(params[RoutingKey]); cs != "" {
			return cs
		}
		return l.Target.ConnString(target.ReadOnly, vu)
	}
	return l.Target.ConnString(l.Intent, vu)
}

// ReadConnString is where a read-intent session of VU vu goes (tpcc's second session).
func (l *Load) ReadConnString(params map[string]string, vu int) string {
	if cs := l.routes.ConnString(params[RoutingKey]); cs != "" {
		return cs
	}
	return l.Target.ConnString(target.ReadOnly, vu)
}

// Connector opens a VU's session and asks where it landed.
func (l *Load) Connector() func(ctx context.Context, vu workload.VU) (*pgx.Conn, workload.Landing, error) {
	return func(ctx context.Context, vu workload.VU) (*pgx.Conn, workload.Landing, error) {
		c, err := target.Connect(ctx, l.ConnString(vu.Params, vu.ID), pgops.WorkerAppName)
		if err != nil {
			return nil, workload.Landing{}, err
		}
		where, err := l.Land(ctx, c)
		if err != nil {
			c.Close(context.WithoutCancel(ctx))
			return nil, workload.Landing{}, err
		}
		return c, where, nil
	}
}

// Land asks a session where it landed, and names the node as the target names it (one name
// per node: the topology's, not cluster_name or the address).
func (l *Load) Land(ctx context.Context, c *pgx.Conn) (workload.Landing, error) {
	where, err := target.Land(ctx, c)
	if err != nil {
		return workload.Landing{}, err
	}
	return workload.Landing{Node: l.nodeName(where), InRecovery: where.InRecovery}, nil
}

// nodeName names the node a session landed on: as the target names it (the topology's
// name, or the NAME of NAME=URL), else by the server's cluster_name, else by its address,
// which behind a listener is noted (addrNamed).
func (l *Load) nodeName(where target.Landing) string {
	if name := l.Target.NameOfAddr(where.Addr); name != "" {
		return name
	}
	if where.Node == where.Addr && l.Target.Listener != "" {
		l.addrNamed.Store(true)
	}
	return where.Node
}

// NodeConns opens a session to the primary and every standby (never through a listener),
// for the servers' buffer counters; a standby the run does not use and found down is left out.
func (l *Load) NodeConns(ctx context.Context) ([]*pgx.Conn, error) {
	var conns []*pgx.Conn
	for i, cs := range append([]string{l.Target.Primary}, l.Target.Standbys...) {
		if cs == "" || (i > 0 && l.down[l.Target.NameOfStandby(i-1)]) {
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

// Plan is the experiment's steps in the order they run.
func (l *Load) Plan() []runner.Point { return l.Sweep.Plan() }

// spec is the shape of one step: the load axis gives its VUs.
func (l *Load) spec(pt runner.Point) runner.StepSpec {
	s := l.Step
	if len(l.Sweep.Axes) > 0 {
		s.VUs, _ = strconv.Atoi(pt.Params[l.Sweep.Axes[0].Name])
	}
	return s
}

// Run runs the experiment (the Experiment contract): it fills the result's metadata,
// samples beside every step and records each step as it ends; the analysis then judges
// where read intent landed (analyze's read-intent-on-primary). A step that did not
// complete (no successful operation, too many errors) makes the run incomplete and its
// error non-nil (the runner stops the run there).
func (l *Load) Run(ctx context.Context, r *Running) error {
	rec, err := r.Recorder()
	if err != nil {
		return err
	}
	l.describe(ctx, rec)
	samplers := append([]runner.Sampler(nil), l.Samplers...)
	modes := []string{l.StaleProbe}
	switch l.StaleProbe {
	case "":
		modes = nil
	case result.StaleBoth:
		modes = []string{result.StaleEventual, result.StaleCausal}
	}
	var ids atomic.Int64 // the probes' rows, one sequence for both
	for _, m := range modes {
		p, err := newStaleProbe(ctx, l, m, &ids)
		if err != nil {
			rec.Warn("stale-read probe (" + m + "): not run: " + err.Error())
			continue
		}
		defer p.close()
		samplers = append(samplers, p)
	}
	if l.Sample {
		s := StartSamplers(ctx, l.sampled(), l.Database, !l.Restarts)
		defer s.Close()
		samplers = append(samplers, s.List...)
		rec.Warn(s.Warnings...)
		if len(l.remote) > 0 {
			hs, err := sample.NewRemoteHostStep(l.remote, 0)
			if err != nil {
				return err
			}
			samplers = append(samplers, hs)
		}
	}
	cfg := runner.Config{
		Workload: l.Workload, Plan: l.Plan(), Spec: l.spec, Seed: l.Sweep.Seed, Samplers: samplers,
		Progress: func(p runner.Progress) { r.Emit(p) },
		StepDone: func(steps []result.Step) {
			rec.Steps(steps)
			r.Emit(StepEnded{Step: steps[len(steps)-1], Segment: rec.Result.Meta.Segment})
		},
	}
	if !l.Segment.Whole() {
		b, err := l.segmented(ctx, r, rec, &cfg)
		if err != nil {
			return err
		}
		defer b.close()
	}
	steps, runErr := runner.Run(ctx, cfg)
	rec.Result.Steps = steps
	if runErr == nil {
		runErr = FailedSteps(steps)
	}
	rec.Warn(l.notes...)
	if l.addrNamed.Load() {
		rec.Warn(AddrNamedNote)
	}
	return runErr
}

// segmented opens the segments' barrier in the target's primary, records the segment in the
// result and has the runner run the segment's share and wait at the barrier before each step.
func (l *Load) segmented(ctx context.Context, r *Running, rec *Recorder, cfg *runner.Config) (*barrier, error) {
	run := l.SegmentRun
	if run == "" {
		run = SegmentRunName(r.setup.Args)
	}
	b, err := openBarrier(ctx, l.Target.ConnString(target.ReadWrite, 0), l.Segment, run, l.SegmentTimeout)
	if err != nil {
		return nil, err
	}
	meta := &result.Segment{Index: l.Segment.Index, Of: l.Segment.Of, Run: run}
	rec.Result.Meta.Segment = meta
	cfg.Segment = l.Segment
	cfg.Barrier = func(ctx context.Context, p runner.Point) error {
		r.Emit(Log{Line: fmt.Sprintf("segment %s: waiting for the other segments at step %d", l.Segment, p.Index+1)})
		st, err := b.wait(ctx, p.Index)
		if err == nil {
			meta.Starts = append(meta.Starts, st)
		}
		return err
	}
	return b, nil
}

// describe fills the result's configuration, seed, topology and server.
func (l *Load) describe(ctx context.Context, rec *Recorder) {
	res := rec.Result
	res.Meta.Config = l.Config
	res.Meta.Seed = l.Sweep.Seed
	res.Meta.Topology = l.Target.Summary()
	if l.routes != nil {
		res.Meta.Topology.Listener = l.routes.Addr
	}
	if cs := l.Target.ConnString(target.ReadWrite, 0); cs != "" {
		if c, err := target.Connect(ctx, cs, "agbench"); err == nil {
			if res.Meta.Server, err = target.ServerInfo(ctx, c); err != nil {
				rec.Warn("server version and settings not read: " + err.Error())
			}
			c.Close(context.WithoutCancel(ctx))
		}
	}
}

// FailedSteps returns an error naming the steps that did not complete (no successful
// operation, too many errors, cut short, cut by a fault: result.Step.FaultReason, said as
// the sessions still lost when they were) or whose load was not all running at their end
// (sessions lost and not made again: result.Reconnects.StillLost; no operation completed in
// its last seconds: analyze.Stall), or nil: a run with such a
// step is incomplete and its command exits 1.
func FailedSteps(steps []result.Step) error {
	var errs []error
	for _, st := range steps {
		stalled := stalledFrom(st)
		switch r := st.Reconnects; {
		case !st.Complete && !(r.StillLost() && strings.HasPrefix(st.IncompleteReason, result.FaultPrefix)):
			errs = append(errs, fmt.Errorf("step %d (%s): %s", st.Index+1, stepName(st), st.IncompleteReason))
		case r.StillLost():
			why := fmt.Sprintf("%d of %d sessions lost and not made again by the window's end (%.1f s without them)", r.Unrestored, st.Concurrency(), r.UnrestoredSeconds)
			if r.LastError != "" {
				why += ": " + strings.Join(strings.Fields(strings.ReplaceAll(r.LastError, ":\n", ":")), " ")
			}
			errs = append(errs, fmt.Errorf("step %d (%s): %s", st.Index+1, stepName(st), why))
		case stalled >= 0:
			errs = append(errs, fmt.Errorf("step %d (%s): no operation completed from %.1f s of the window to its end (%.1f s): the load was not running when it closed (a frozen server, a synchronous standby down, a lock?)",
				st.Index+1, stepName(st), stalled, st.Window.Seconds()))
		}
	}
	return errors.Join(errs...)
}

// stalledFrom is where a stall of the step that lasted to the window's end began, in
// seconds of the window, or -1 (analyze.Stall).
func stalledFrom(st result.Step) float64 {
	_, _, from := analyze.Stall(st)
	return from
}

// stepName names a step by its knobs ("threads=4 routing=on").
func stepName(st result.Step) string { return st.Knobs() }

// The hosts' readings at a window's close are taken at the close, not after the other
// samplers' Stops.
var _ runner.WindowCloser = (*sample.RemoteHostStep)(nil)
