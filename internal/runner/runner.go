// Package runner owns running a workload: virtual users (VUs) each with their own worker,
// iterations per VU or a duration, ramp-up excluded from the measured window, an optional
// fixed rate (an open model), the steps of a sweep and their variants in a planned order,
// cancellation that keeps what was measured, samplers started and stopped around each
// measured window, the load generator's own CPU use, failed operations classed by SQLSTATE
// with their times, lost sessions made again with a bounded backoff (reconnect.go), and
// each VU's stretches of the window without a completed operation (quiet.go).
// A step without a successful operation, or cut short, is incomplete.
//
// The runner never knows SQL: workloads do the work (internal/workload), measure records it
// (internal/measure) and the runner hands each step over as a result.Step. It must not import
// workloads' packages, the cluster, the listener or the report.
//
// A run may be one segment of several load generators (Config.Segment): the runner then runs
// the segment's VUs, numbered as in the whole run, and its turns of a fixed rate's schedule,
// and waits at the segments' barrier (Config.Barrier) before each step's load begins.
//
// Imports from agbench: only internal/agerr, internal/measure, internal/result, internal/segment,
// internal/workload.
package runner

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agbench/agbench/internal/measure"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/segment"
	"github.com/agbench/agbench/internal/workload"
)

// Defaults and limits.
const (
	// DefaultTick is how often handles are merged, throughput points taken and progress shown.
	DefaultTick = time.Second
	// LateThreshold: an operation of a fixed-rate step that starts later than this after its
	// scheduled time is counted as a late start.
	LateThreshold = time.Millisecond
	// samplerStopTimeout bounds stopping the samplers and the after-step hooks.
	samplerStopTimeout = time.Minute
	// maxErrorSamples is how many distinct error messages a step keeps.
	maxErrorSamples = 5
)

// ErrTooManyErrors ends a step whose operations failed more than StepSpec.MaxErrors times.
var ErrTooManyErrors = errors.New("too many failed operations")

// StepSpec is how one step runs.
type StepSpec struct {
	// VUs is the number of virtual users, each with its own worker.
	VUs int
	// Iterations per VU (with Rate: in total, VUs × Iterations); 0 means run for Duration.
	Iterations int64
	Duration   time.Duration
	// Rampup runs the load before the measured window; nothing of it is counted.
	Rampup time.Duration
	// Rate, when above 0, is a fixed rate of operations per second for the whole step: the
	// i-th operation is scheduled at start + i/Rate and its latency is measured from then,
	// so queueing delay behind busy VUs counts (no coordinated omission).
	Rate float64
	// MaxErrors stops the step after more failed operations than this; 0 means no limit.
	MaxErrors int64
	// ReconnectFor is how long a VU whose session was lost keeps trying to make it again
	// before it gives up (and the step is incomplete); 0 means until the step's end for a
	// step of a duration, and DefaultReconnectFor for a step of iterations.
	ReconnectFor time.Duration
}

// Sampler measures something beside the load (the database, the OS) during each measured
// window. Start is called as the window begins to open, with step.Window.Start set to then;
// the window opens once every sampler has started (Window.Start set again, at most the
// samplers' start-up later), so no operation of it comes before a sampler's first reading.
// Stop is called as it closes (step.Window set, figures filled); Stop adds the sampler's
// series to step.Series and its figures to step.Counters. A sampler's error becomes a warning of the step, never a failure.
type Sampler interface {
	Start(ctx context.Context, step *result.Step) error
	Stop(ctx context.Context, step *result.Step) error
}

// WindowCloser is a Sampler whose reading at the window's close must be taken at the close:
// CloseWindow is called for every such sampler at once as the window closes, before any
// sampler's Stop, and its Stop then uses what it read. Stops run one after another, and
// some take seconds (the database's statistics wait for idle backends to flush): a host
// read after them was read 4 s after a 4 s window closed, on a busy machine.
type WindowCloser interface {
	CloseWindow(ctx context.Context, end time.Time)
}

// Progress is the state of a running step, given on every tick.
type Progress struct {
	Point Point
	// Spec is the whole step's; Segment the share of it this run runs (Config.Segment).
	Spec    StepSpec
	Segment segment.Segment
	Of      int // steps in the plan
	Elapsed time.Duration
	// Measuring is false during ramp-up.
	Measuring bool
	// Ops and Errors so far in the window; Rate is operations per second of the last tick.
	Ops, Errors int64
	Rate        float64
	// TickOps counts the last tick's successful operations; P50 and P99 are their latencies,
	// absent (zero) when TickOps is 0.
	TickOps  int64
	P50, P99 time.Duration
}

// Config is a whole run.
type Config struct {
	Workload workload.Workload
	Plan     []Point
	// Spec gives each step's shape from its point (VUs from "threads", and so on).
	Spec func(Point) StepSpec
	Seed int64
	// Samplers run around every measured window.
	Samplers []Sampler
	// Tick defaults to DefaultTick.
	Tick time.Duration
	// Progress, when set, is called on every tick (from the runner's goroutine).
	Progress func(Progress)
	// StepDone, when set, is called after each step with everything measured so far, so
	// that a command can write its result file as it goes.
	StepDone func(steps []result.Step)
	// Segment is the share of every step this run runs: its VUs of Spec's, its turns of a
	// fixed rate's schedule (the zero value: the whole step).
	Segment segment.Segment
	// Barrier, when set, is called once a step's workers are made, before its load begins,
	// and returns when every segment may start it; its error ends the run before the step.
	Barrier func(ctx context.Context, p Point) error
}

// Run runs every step of the plan in order and returns what was measured. When ctx ends or
// a step fails, the steps measured so far are returned (the last one marked incomplete)
// with the error.
func Run(ctx context.Context, cfg Config) ([]result.Step, error) {
	var steps []result.Step
	for _, p := range cfg.Plan {
		if ctx.Err() != nil {
			return steps, ctx.Err()
		}
		st, err := runStep(ctx, cfg, p)
		if st != nil {
			steps = append(steps, *st)
			if cfg.StepDone != nil {
				cfg.StepDone(steps)
			}
		}
		if err != nil {
			return steps, fmt.Errorf("step %d (%s): %w", p.Index+1, p, err)
		}
	}
	return steps, nil
}

// vuSeed derives a VU's seed from the run's seed, the step and the VU.
func vuSeed(seed int64, step, vu int) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%d/%d", seed, step, vu)
	return int64(h.Sum64() &^ (1 << 63))
}

// makeWorkers makes one worker per VU of the segment's share of all (the VUs first, first+1 …
// of the step), concurrently; on any failure it closes those made.
func makeWorkers(ctx context.Context, cfg Config, p Point, first, n, all int) ([]workload.Worker, error) {
	workers := make([]workload.Worker, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			id := first + i
			vu := workload.VU{ID: id, Of: all, Segment: cfg.Segment, Seed: vuSeed(cfg.Seed, p.Index, id), Params: copyParams(p.Params)}
			workers[i], errs[i] = cfg.Workload.NewWorker(ctx, vu)
		}(i)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		closeWorkers(workers)
		return nil, err
	}
	return workers, nil
}

func closeWorkers(ws []workload.Worker) {
	for _, w := range ws {
		if c, ok := w.(workload.Closer); ok && w != nil {
			c.Close()
		}
	}
}

func appendNote(notes []string, note string) []string {
	if note == "" {
		return notes
	}
	return append(notes, note)
}

// reconnects reports whether the step's workers make a lost session again.
func reconnects(ws []workload.Worker) bool {
	for _, w := range ws {
		if _, ok := w.(workload.Reconnector); ok {
			return true
		}
	}
	return false
}

// tally is the state the VUs of a step share.
type tally struct {
	measuring atomic.Bool
	// closed is set as the window closes: a VU begins no operation after it, which nothing
	// would count and which would still do its work on the servers (a tpcc New-Order begun
	// then moves a district's next order id), so that each VU has at most one operation
	// past the window's end, the one it was running.
	closed  atomic.Bool
	late    atomic.Int64
	errors  atomic.Int64
	mu      sync.Mutex
	samples []string
	classes ErrorClasses
	outages outages
}

// noteError counts a failed operation of the window in its class, at the time it failed,
// and keeps its message when it is one of the first distinct ones.
func (t *tally) noteError(err error, lost bool, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.classes == nil {
		t.classes = ErrorClasses{}
	}
	t.classes.Note(Classify(err, lost), err, at)
	msg := err.Error()
	if len(t.samples) >= maxErrorSamples {
		return
	}
	for _, s := range t.samples {
		if s == msg {
			return
		}
	}
	t.samples = append(t.samples, msg)
}

// runStep runs one step and returns it, measured. Set-up failures return no step.
func runStep(ctx context.Context, cfg Config, p Point) (*result.Step, error) {
	spec := cfg.Spec(p)
	if spec.VUs < 1 {
		return nil, fmt.Errorf("a step needs at least one VU, got %d", spec.VUs)
	}
	if spec.Iterations <= 0 && spec.Duration <= 0 {
		return nil, fmt.Errorf("a step needs iterations or a duration")
	}
	if cfg.Segment.Count(spec.VUs) < 1 {
		return nil, fmt.Errorf("segment %s of a step of %d VUs has none", cfg.Segment, spec.VUs)
	}
	hooks, _ := cfg.Workload.(workload.StepHooks)
	workers, notes, err := setUp(ctx, cfg, p, spec, hooks)
	if err != nil {
		return nil, err
	}
	if cfg.Barrier != nil {
		if err := cfg.Barrier(ctx, p); err != nil {
			closeWorkers(workers)
			return nil, err
		}
	}
	st := &result.Step{
		Index: p.Index, Point: p.Point, Variant: p.VariantName, Repeat: p.Repeat, Params: copyParams(p.Params),
		VUs: len(workers), Iterations: spec.Iterations, Rate: cfg.Segment.Rate(spec.Rate), RampupSeconds: spec.Rampup.Seconds(),
		Warnings: notes,
	}
	ex := newExecution(cfg, p, spec, workers)
	runErr := ex.run(ctx, st)
	st.Sessions = sessions(ex.made)
	// Sessions end before the hooks read the server, so that their statistics are flushed.
	closeWorkers(workers)
	if err := ex.collect(st); err != nil {
		return st, err
	}
	if runErr == nil {
		runErr = ex.ended(st)
	}
	ex.finish(ctx, st, hooks)
	st.Complete = runErr == nil
	switch {
	case runErr != nil:
		st.IncompleteReason = runErr.Error()
	case st.FaultReason() != "":
		// The step ran to its end, but a fault cut it: incomplete, and the run goes on.
		st.Complete, st.IncompleteReason = false, st.FaultReason()
	}
	return st, runErr
}

// setUp runs the workload's before-step hook and makes the step's workers, each waiting
// out a server that restarts or fails over between steps; it returns the notes of the waits.
func setUp(ctx context.Context, cfg Config, p Point, spec StepSpec, hooks workload.StepHooks) ([]workload.Worker, []string, error) {
	var notes []string
	if hooks != nil {
		note, err := waitServer(ctx, spec.ReconnectFor, func() error { return hooks.BeforeStep(ctx, copyParams(p.Params)) })
		if err != nil {
			return nil, nil, err
		}
		notes = appendNote(notes, note)
	}
	var workers []workload.Worker
	first, last := cfg.Segment.Range(spec.VUs)
	note, err := waitServer(ctx, spec.ReconnectFor, func() (err error) {
		workers, err = makeWorkers(ctx, cfg, p, first, last-first, spec.VUs)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return workers, appendNote(notes, note), nil
}

// collect fills the step's figures from the window: errors, reconnects, late starts,
// operations and their throughput, the client's CPU per operation.
func (ex *execution) collect(st *result.Step) error {
	st.ErrorSamples = ex.tally.samples
	st.Errors = ex.tally.classes.List()
	if reconnects(ex.workers) {
		st.Reconnects = ex.tally.outages.result()
	}
	st.LateStarts = ex.tally.late.Load()
	ops, err := ex.reg.Ops()
	if err != nil {
		return err
	}
	st.Ops = ops
	st.Throughput = ex.reg.Throughput()
	st.ErrorThroughput = ex.reg.ErrorThroughput()
	if st.Client.UserSeconds+st.Client.SystemSeconds > 0 {
		if n := st.Totals(); n.Count+n.Errors > 0 {
			st.Client.PerOpMicros = (st.Client.UserSeconds + st.Client.SystemSeconds) * 1e6 / float64(n.Count+n.Errors)
		}
	}
	return nil
}

// ended says why a step whose window ran to its end is a failure: no successful operation,
// or VUs that gave up making their lost session again.
func (ex *execution) ended(st *result.Step) error {
	if st.Totals().Count == 0 {
		return fmt.Errorf("%w (%d failed)", ErrNoSuccess, st.Totals().Errors)
	}
	if n := ex.tally.outages.gaveUp.Load(); n > 0 {
		return fmt.Errorf("%w: %d VU(s) without a session for %v stopped", ErrSessionsLost, n, ex.spec.reconnectFor())
	}
	return nil
}

// finish stops the samplers (with a bounded context of their own when the run is being
// cancelled) and runs the workload's after-step hook, which reads the server after a
// window cut short, but not when the whole run is being cancelled.
func (ex *execution) finish(ctx context.Context, st *result.Step, hooks workload.StepHooks) {
	postCtx, cancelPost := context.WithTimeout(context.WithoutCancel(ctx), samplerStopTimeout)
	defer cancelPost()
	var closing sync.WaitGroup
	for _, s := range ex.startedSamplers {
		if c, ok := s.(WindowCloser); ok {
			closing.Add(1)
			go func() {
				defer closing.Done()
				c.CloseWindow(postCtx, st.Window.End)
			}()
		}
	}
	closing.Wait()
	for _, s := range ex.startedSamplers {
		if err := s.Stop(postCtx, st); err != nil {
			st.Warnings = append(st.Warnings, fmt.Sprintf("sampler: %v", err))
		}
	}
	if ctx.Err() != nil || hooks == nil {
		return
	}
	counters, err := hooks.AfterStep(postCtx, copyParams(ex.p.Params), st.Window.End.Sub(st.Window.Start))
	if err != nil {
		st.Warnings = append(st.Warnings, fmt.Sprintf("after step: %v", err))
	}
	for k, v := range counters {
		if st.Counters == nil {
			st.Counters = map[string]float64{}
		}
		st.Counters[k] = v
	}
}

// execution is one step while it runs.
type execution struct {
	cfg     Config
	p       Point
	spec    StepSpec
	workers []workload.Worker
	// first is the number in the whole step of the segment's first VU (workers[0]).
	first int
	// busySince is, per VU, when its operation of the window in progress began (unix ns; 0:
	// none), read when the window closes (result.Step.InFlight).
	busySince []atomic.Int64
	// quiet is, per VU, its stretches without a completed operation (quiet.go), and
	// windowStart when the window opened (with the clock's monotonic reading): written
	// before tally.measuring is set, read by a VU only once it has seen it set.
	quiet       []quietWatch
	windowStart time.Time
	// made is, per VU, every session its worker made (landings.go), handed over as it ends.
	made []madeSessions
	// shownFrom is when the window opens, or will once the ramp-up is over (progress counts
	// its time from then); deadline fires when a step of a duration has lasted it. Only the
	// runner's goroutine reads and writes them.
	shownFrom time.Time
	deadline  <-chan time.Time
	// opened, for a step without ramp-up, is closed as the window opens: its VUs, started
	// before, begin then, and run while the samplers start.
	opened          chan struct{}
	reg             *measure.Registry
	tally           tally
	startedSamplers []Sampler
	cpuUser, cpuSys time.Duration
}

func newExecution(cfg Config, p Point, spec StepSpec, workers []workload.Worker) *execution {
	first, _ := cfg.Segment.Range(spec.VUs)
	return &execution{cfg: cfg, p: p, spec: spec, workers: workers, first: first, reg: measure.NewRegistry(time.Now()),
		busySince: make([]atomic.Int64, len(workers)), quiet: make([]quietWatch, len(workers)), made: make([]madeSessions, len(workers))}
}

// run drives the VUs through ramp-up and the measured window and fills the step's window
// and client CPU. It returns ctx's error when cancelled and ErrTooManyErrors when the
// errors went over the limit.
func (ex *execution) run(ctx context.Context, st *result.Step) error {
	loadCtx, stopLoad := context.WithCancelCause(ctx)
	defer stopLoad(nil)
	defer raiseProcs(len(ex.workers))()
	start := time.Now()
	ex.shownFrom = start.Add(ex.spec.Rampup)

	if ex.spec.Rampup <= 0 {
		ex.opened = make(chan struct{})
	}
	var jobs chan time.Time
	if ex.spec.Rate > 0 {
		jobs = make(chan time.Time)
		if ex.spec.Rampup > 0 {
			go ex.schedule(loadCtx, start, jobs)
		}
	}
	allDone := ex.startVUs(loadCtx, stopLoad, jobs)
	if ex.spec.Rampup <= 0 {
		// The VUs are started and wait for the window, which opens once the samplers have
		// started (seconds, connecting to every server, on a busy machine): the window holds
		// no time without load, and the samplers' first readings none of its operations.
		ex.open(ctx, st)
		if jobs != nil {
			go ex.schedule(loadCtx, ex.shownFrom, jobs)
		}
	}
	var rampTimer <-chan time.Time
	if ex.spec.Rampup > 0 {
		rampTimer = time.After(ex.spec.Rampup)
	}
	err := ex.wait(ctx, loadCtx, st, rampTimer, allDone)
	end := time.Now()
	ex.tally.closed.Store(true)
	if !ex.tally.measuring.Load() {
		// Cut short (or finished) before the window opened: an empty window.
		ex.openWindow(ctx, st, end)
	}
	ex.reg.Freeze(end)
	ex.tally.measuring.Store(false)
	ex.inFlight(st, end)
	stopLoad(nil)
	<-allDone
	ex.closeWindow(st, end)
	if err == nil {
		err = ctx.Err()
	}
	return err
}

// startVUs starts one goroutine per VU; the channel returned is closed once every VU ended.
func (ex *execution) startVUs(loadCtx context.Context, stopLoad context.CancelCauseFunc, jobs chan time.Time) <-chan struct{} {
	var wg sync.WaitGroup
	for i, w := range ex.workers {
		wg.Add(1)
		h := ex.reg.NewHandle()
		delay := time.Duration(0)
		if jobs == nil && ex.spec.Rampup > 0 {
			// Staggered as in the whole run: a segment's VUs start in their places of it.
			delay = ex.spec.Rampup * time.Duration(ex.first+i) / time.Duration(ex.spec.VUs)
		}
		go func() {
			defer wg.Done()
			// A VU keeps its thread (and, see ensureProcs, a P): a session that blocks in read(2) on each round trip then
			// runs like a client thread of pgbench, which the kernel pairs with its server
			// process on a core. Hopping between the runtime's threads costs cross-core wake-ups
			// (make bench-stress: 2 clients ~55k -> ~85k TPS on 2 cores).
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			// A context per VU: the driver registers on it for every operation, and VUs
			// sharing one would contend for its lock.
			vuCtx, cancel := context.WithCancel(loadCtx)
			defer cancel()
			ex.vu(vuCtx, stopLoad, i, w, h, delay, jobs)
		}()
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()
	return allDone
}

// open opens the measured window (openWindow); a step of a duration lasts it from then.
func (ex *execution) open(ctx context.Context, st *result.Step) {
	ex.shownFrom = ex.openWindow(ctx, st, time.Time{})
	if ex.spec.Iterations == 0 {
		ex.deadline = time.After(ex.spec.Duration)
	}
}

// wait ticks (merging the handles, showing progress) until the step ends: its duration
// from the window's opening (the window opens as rampTimer fires, after the ramp-up), every
// VU done, or the load stopped (its cause is returned).
func (ex *execution) wait(ctx, loadCtx context.Context, st *result.Step, rampTimer <-chan time.Time, allDone <-chan struct{}) error {
	tick := ex.cfg.Tick
	if tick <= 0 {
		tick = DefaultTick
	}
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	for {
		select {
		case <-rampTimer:
			ex.open(ctx, st)
		case now := <-ticker.C:
			tk := ex.reg.Tick(now)
			ex.progress(tk, now.Sub(ex.shownFrom))
		case <-ex.deadline:
			return nil
		case <-allDone:
			return nil
		case <-loadCtx.Done():
			return context.Cause(loadCtx)
		}
	}
}

// inFlight notes the operations of the window still running when it closed at end.
func (ex *execution) inFlight(st *result.Step, end time.Time) {
	for i := range ex.busySince {
		if since := ex.busySince[i].Load(); since > 0 {
			st.InFlight++
			st.InFlightOldestSeconds = max(st.InFlightOldestSeconds, end.Sub(time.Unix(0, since)).Seconds())
		}
	}
}

// closeWindow fills the step's window end, the VUs' quiet stretches and the client's CPU,
// once the VUs have ended.
func (ex *execution) closeWindow(st *result.Step, end time.Time) {
	st.Window.End = end
	st.VUQuietMinSeconds = QuietMin.Seconds()
	st.VUQuiet = vuQuiet(ex.quiet, ex.workers, ex.first, st.Window.Start, end)
	u, s := cpuTimes()
	st.Client.UserSeconds = (u - ex.cpuUser).Seconds()
	st.Client.SystemSeconds = (s - ex.cpuSys).Seconds()
	// The share is of the CPU this process may use (affinity, control-group quota), not
	// of the machine: under taskset -c 0 one busy core is 100%.
	st.Client.Cap = result.ReadCPUCap()
	capCores := st.Client.Cap.Cores()
	if capCores <= 0 {
		capCores = float64(runtime.NumCPU())
	}
	if sec := st.Window.Seconds(); sec > 0 {
		st.Client.Utilisation = (st.Client.UserSeconds + st.Client.SystemSeconds) / sec / capCores
	}
}

// openWindow starts the samplers and then the measured window: counters reset, CPU noted,
// the VUs let go (opened). The window starts at at, or when at is zero at once the samplers
// have started (they are given the time they began to start as the window's start), and
// openWindow returns it.
func (ex *execution) openWindow(ctx context.Context, st *result.Step, at time.Time) time.Time {
	st.Window.Start = at
	if at.IsZero() {
		st.Window.Start = time.Now()
	}
	for _, smp := range ex.cfg.Samplers {
		if err := smp.Start(ctx, st); err != nil {
			st.Warnings = append(st.Warnings, fmt.Sprintf("sampler: %v", err))
			continue
		}
		ex.startedSamplers = append(ex.startedSamplers, smp)
	}
	now := at
	if now.IsZero() {
		now = time.Now()
	}
	ex.reg.Reset(now)
	ex.tally.late.Store(0)
	ex.tally.errors.Store(0)
	ex.tally.mu.Lock()
	ex.tally.samples = nil
	ex.tally.classes = nil
	ex.tally.mu.Unlock()
	ex.tally.outages.open(now)
	st.Window.Start = now
	ex.windowStart = now
	ex.cpuUser, ex.cpuSys = cpuTimes()
	ex.tally.measuring.Store(true)
	if ex.opened != nil {
		close(ex.opened)
	}
	return now
}

func (ex *execution) progress(tk measure.Tick, elapsed time.Duration) {
	if ex.cfg.Progress == nil {
		return
	}
	pr := Progress{Point: ex.p, Spec: ex.spec, Segment: ex.cfg.Segment, Of: len(ex.cfg.Plan), Elapsed: elapsed, Measuring: ex.tally.measuring.Load()}
	iv := measure.NewHistogram()
	var ivn int64
	for _, o := range tk.Total {
		pr.Ops += o.Count()
		pr.Errors += o.Errors()
	}
	for _, o := range tk.IntervalOps {
		iv.Merge(o.Success)
		ivn += o.Count() + o.Errors()
	}
	if tk.Interval > 0 {
		pr.Rate = float64(ivn) / tk.Interval.Seconds()
	}
	if pr.TickOps = iv.TotalCount(); pr.TickOps > 0 {
		pr.P50 = time.Duration(iv.ValueAtQuantile(50)) * time.Microsecond
		pr.P99 = time.Duration(iv.ValueAtQuantile(99)) * time.Microsecond
	}
	ex.cfg.Progress(pr)
}

// schedule sends the scheduled start of operation i, start + i/rate, for as long as the
// load runs (or VUs × iterations operations). A send blocks while every VU is busy; the
// times it sends next are then already past, and that queueing delay counts in latency.
// A segment sends only its turns of the whole run's schedule (segment.Owns).
func (ex *execution) schedule(ctx context.Context, start time.Time, jobs chan<- time.Time) {
	defer close(jobs)
	period := time.Duration(float64(time.Second) / ex.spec.Rate)
	total := ex.spec.Iterations * int64(ex.spec.VUs)
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	seg := ex.cfg.Segment
	for i := int64(seg.Index); total == 0 || i < total; i += int64(max(seg.Of, 1)) {
		at := start.Add(time.Duration(i) * period)
		if d := time.Until(at); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return
			}
		}
		select {
		case jobs <- at:
		case <-ctx.Done():
			return
		}
	}
}

// vu is one virtual user's loop.
func (ex *execution) vu(ctx context.Context, stop context.CancelCauseFunc, i int, w workload.Worker, h *measure.Handle,
	delay time.Duration, jobs <-chan time.Time) {
	busy := &ex.busySince[i]
	// The VU's own copies, handed over as it returns: VUs writing their records side by side
	// in one slice on every operation would share cache lines across cores.
	quiet := &quietWatch{}
	made := &madeSessions{}
	made.begin(w)
	defer func() { ex.quiet[i], ex.made[i] = *quiet, *made }()
	if !ex.waitStart(ctx, delay) {
		return
	}
	var done int64
	var op workload.Op
	var windowStart time.Time
	rc, _ := w.(workload.Reconnector)
	tl, _ := w.(workload.Tallier)
	for ctx.Err() == nil {
		if jobs == nil && ex.spec.Iterations > 0 && done >= ex.spec.Iterations {
			quiet.ended = true
			return
		}
		begin, ok := ex.next(jobs)
		if !ok {
			quiet.ended = true
			return
		}
		if ex.tally.closed.Load() {
			return // the window has closed and the load is being stopped
		}
		op = workload.Op{}
		measuring := ex.tally.measuring.Load()
		if measuring {
			busy.Store(begin.UnixNano())
		}
		err := w.Do(ctx, &op)
		busy.Store(0)
		// One reading of the monotonic clock (time.Now would read the wall clock too).
		took := time.Since(begin)
		lat, now := took-op.Excluded, begin.Add(took)
		if !op.Submitted.IsZero() {
			lat = now.Sub(op.Submitted) - op.Excluded
		}
		if ctx.Err() != nil {
			// Cut off by the end of the window or cancellation: not an operation of the window.
			return
		}
		lost := err != nil && rc != nil && rc.Lost()
		// An operation begun in ramp-up is not one of the window (its lost session is made
		// again all the same), nor one that ended after the window closed and before the load
		// was told to stop: the registry, frozen, refuses it, and so must every other count.
		if measuring && h.Record(sample(&op, lat, err)) {
			if tl != nil {
				tl.Tally(&op, err != nil)
			}
			done++
			made.did()
			if windowStart.IsZero() {
				windowStart = ex.windowStart
				quiet.open(windowStart)
			}
			if now.Sub(quiet.last) >= QuietMin {
				quiet.note(ex.first+i, w, windowStart, now)
			}
			quiet.last, quiet.reconnected = now, false
			if err != nil && !ex.failed(stop, err, lost) {
				quiet.ended = true
				return
			}
		}
		if lost {
			if !ex.tally.outages.reconnect(ctx, rc, ex.spec.reconnectFor()) {
				return
			}
			made.remade(w)
			quiet.reconnected = true
		}
	}
}

// waitStart holds a VU until the window opens (a step without ramp-up) and for its share
// of the ramp-up (delay); it reports false when the step ended first.
func (ex *execution) waitStart(ctx context.Context, delay time.Duration) bool {
	if ex.opened != nil {
		select {
		case <-ex.opened:
		case <-ctx.Done():
			return false
		}
	}
	return delay <= 0 || sleep(ctx, delay)
}

// next is when the VU's next operation begins: now, or at a fixed rate the time it was
// scheduled for (a late start counted); false when the schedule has ended.
func (ex *execution) next(jobs <-chan time.Time) (time.Time, bool) {
	if jobs == nil {
		return time.Now(), true
	}
	at, ok := <-jobs
	if !ok {
		return at, false
	}
	if time.Since(at) > LateThreshold && ex.tally.measuring.Load() {
		ex.tally.late.Add(1)
	}
	return at, true
}

// sample is an operation of the window as measure records it.
func sample(op *workload.Op, lat time.Duration, err error) measure.Sample {
	name := op.Name
	if name == "" {
		name = workload.DefaultOp
	}
	return measure.Sample{Op: name, Latency: lat, Err: err != nil, Rows: op.Rows, Bytes: op.Bytes, Retries: op.Retries}
}

// failed counts a failed operation of the window; over StepSpec.MaxErrors it stops the
// step and reports false.
func (ex *execution) failed(stop context.CancelCauseFunc, err error, lost bool) bool {
	ex.tally.noteError(err, lost, time.Now())
	if n := ex.tally.errors.Add(1); ex.spec.MaxErrors > 0 && n > ex.spec.MaxErrors {
		stop(fmt.Errorf("%w (%d; first: %v)", ErrTooManyErrors, n, err))
		return false
	}
	return true
}

// procs tracks the steps running in the process, which share GOMAXPROCS: the first one
// to start notes the setting, and the last one to end puts it back.
var procs struct {
	sync.Mutex
	running int
	prev    int
}

// raiseProcs gives a step of vus virtual users the Ps ensureProcs asks for and returns
// the function that ends the step's claim. When the last running step ends, GOMAXPROCS goes
// back to what it was before the first: where that was the runtime's own default it is
// restored as the default, which again follows the CPUs the process may use; a value the
// program or the environment set is restored as it was.
func raiseProcs(vus int) (done func()) {
	procs.Lock()
	defer procs.Unlock()
	if procs.running == 0 {
		procs.prev = runtime.GOMAXPROCS(0)
	}
	procs.running++
	if n := ensureProcs(vus); n > runtime.GOMAXPROCS(0) {
		runtime.GOMAXPROCS(n)
	}
	return func() {
		procs.Lock()
		defer procs.Unlock()
		procs.running--
		if procs.running > 0 {
			return
		}
		runtime.SetDefaultGOMAXPROCS()
		if runtime.GOMAXPROCS(0) != procs.prev {
			runtime.GOMAXPROCS(procs.prev)
		}
	}
}

// maxProcs bounds the Ps ensureProcs asks for.
const maxProcs = 128

// ensureProcs returns the GOMAXPROCS a step of vus virtual users runs with: at least one P
// per VU and one spare. A VU spends most of its time in a blocking system call holding its
// P; with a P idle, the runtime never takes a P from a VU in a call, and the VU's return
// takes the fast path. With fewer Ps than VUs a returning VU waits for one to be handed
// over (make bench-stress at 4 clients on 2 cores: ~44k -> ~51k TPS).
func ensureProcs(vus int) int {
	return max(runtime.GOMAXPROCS(0), min(vus+1, maxProcs))
}
