package runner

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/workload"
)

// fakeLoad is an in-process workload whose operation is a function.
type fakeLoad struct {
	do      func(ctx context.Context, vu workload.VU, op *workload.Op) error
	made    atomic.Int64
	closed  atomic.Int64
	before  atomic.Int64
	counter float64
}

type fakeWorker struct {
	l  *fakeLoad
	vu workload.VU
}

func (l *fakeLoad) NewWorker(_ context.Context, vu workload.VU) (workload.Worker, error) {
	l.made.Add(1)
	return &fakeWorker{l: l, vu: vu}, nil
}

func (l *fakeLoad) BeforeStep(context.Context, map[string]string) error { l.before.Add(1); return nil }
func (l *fakeLoad) AfterStep(context.Context, map[string]string, time.Duration) (map[string]float64, error) {
	return map[string]float64{"fake_counter": l.counter}, nil
}

func (w *fakeWorker) Do(ctx context.Context, op *workload.Op) error { return w.l.do(ctx, w.vu, op) }
func (w *fakeWorker) Close() error                                  { w.l.closed.Add(1); return nil }
func (w *fakeWorker) Landings() []workload.Landing {
	return []workload.Landing{{Node: "node" + strconv.Itoa(w.vu.ID%2+1), InRecovery: w.vu.ID%2 == 1}}
}

func runOne(t *testing.T, ctx context.Context, l workload.Workload, spec StepSpec, samplers ...Sampler) (result.Step, error) {
	t.Helper()
	steps, err := Run(ctx, Config{
		Workload: l, Plan: Sweep{}.Plan(), Spec: func(Point) StepSpec { return spec },
		Samplers: samplers, Tick: 50 * time.Millisecond,
	})
	if len(steps) != 1 {
		t.Fatalf("%d steps, err %v", len(steps), err)
	}
	return steps[0], err
}

func TestIterationsCountExactly(t *testing.T) {
	l := &fakeLoad{counter: 42, do: func(_ context.Context, _ workload.VU, op *workload.Op) error {
		op.Name, op.Rows, op.Bytes = "query", 2, 100
		return nil
	}}
	st, err := runOne(t, context.Background(), l, StepSpec{VUs: 3, Iterations: 50})
	if err != nil || !st.Complete {
		t.Fatalf("err %v complete %v", err, st.Complete)
	}
	q := st.Ops["query"]
	if q.Count != 150 || q.Errors != 0 || q.Rows != 300 || q.Bytes != 15000 || q.Latency.Count != 150 {
		t.Fatalf("query op %+v", q)
	}
	if l.made.Load() != 3 || l.closed.Load() != 3 || l.before.Load() != 1 || st.Counters["fake_counter"] != 42 {
		t.Fatalf("made %d closed %d before %d counters %v", l.made.Load(), l.closed.Load(), l.before.Load(), st.Counters)
	}
	if got, want := landed(st.Sessions), "node1/false 2 100, node2/true 1 50"; got != want {
		t.Fatalf("sessions %s, want %s", got, want)
	}
	if st.Window.End.Before(st.Window.Start) || st.Client.UserSeconds+st.Client.SystemSeconds < 0 {
		t.Fatalf("window %v client %+v", st.Window, st.Client)
	}
}

// A fixed-rate run faster than the operation can go: latency is measured from each
// operation's scheduled time, so the queueing delay shows (coordinated omission not hidden).
func TestFixedRateCountsQueueingDelay(t *testing.T) {
	const service = 20 * time.Millisecond
	l := &fakeLoad{do: func(ctx context.Context, _ workload.VU, op *workload.Op) error {
		time.Sleep(service)
		return nil
	}}
	// 1 VU, 200/s: an operation is scheduled every 5 ms but takes at least 20 ms.
	st, err := runOne(t, context.Background(), l, StepSpec{VUs: 1, Iterations: 40, Rate: 200})
	if err != nil {
		t.Fatal(err)
	}
	op := st.Ops[workload.DefaultOp]
	if op.Count != 40 {
		t.Fatalf("count %d", op.Count)
	}
	// The 40th operation is scheduled at 195 ms but cannot start before 39 × 20 ms = 780 ms.
	if minQueue := 39*service - 195*time.Millisecond; time.Duration(op.Latency.Max)*time.Microsecond < minQueue {
		t.Fatalf("max latency %d us hides the queueing delay (at least %v)", op.Latency.Max, minQueue)
	}
	if st.LateStarts < 30 {
		t.Fatalf("late starts %d, want nearly all of 40", st.LateStarts)
	}
}

// An operation's latency leaves out the time it waited in op.Wait. Each call waits 30 ms
// or more; with the wait left out, what remains is the runner's and the call's own few
// microseconds, so each name's shortest latency is under the shortest wait. Not the
// longest: a busy machine can leave a goroutine unscheduled for longer than the wait just
// after it (82 ms was seen in a test like this one under the race detector at load 29),
// while counting the wait would put every latency at 30 ms or more.
func TestExcludedTimeAndOpPerCall(t *testing.T) {
	var mu sync.Mutex
	shortest := time.Hour
	l := &fakeLoad{do: func(ctx context.Context, vu workload.VU, op *workload.Op) error {
		op.Name = []string{"new_order", "payment"}[vu.ID%2]
		if err := op.Wait(ctx, 30*time.Millisecond); err != nil {
			return err
		}
		op.Retries = 1
		mu.Lock()
		shortest = min(shortest, op.Excluded)
		mu.Unlock()
		return nil
	}}
	st, err := runOne(t, context.Background(), l, StepSpec{VUs: 2, Iterations: 5})
	if err != nil {
		t.Fatal(err)
	}
	if st.Ops["new_order"].Count != 5 || st.Ops["payment"].Count != 5 || st.Ops["payment"].Retries != 5 {
		t.Fatalf("ops %v", st.Ops)
	}
	if shortest < 30*time.Millisecond {
		t.Fatalf("a wait of 30 ms was counted as %v", shortest)
	}
	for name, o := range st.Ops {
		if minLat := time.Duration(o.Latency.Min) * time.Microsecond; minLat >= shortest {
			t.Fatalf("%s: shortest latency %v includes the excluded wait (the shortest wait was %v)", name, minLat, shortest)
		}
	}
}

func TestRampupIsExcluded(t *testing.T) {
	var start atomic.Int64
	l := &fakeLoad{do: func(ctx context.Context, _ workload.VU, op *workload.Op) error {
		start.CompareAndSwap(0, time.Now().UnixNano())
		op.Name = "late"
		if time.Since(time.Unix(0, start.Load())) < 100*time.Millisecond {
			op.Name = "early"
		}
		time.Sleep(time.Millisecond)
		return nil
	}}
	st, err := runOne(t, context.Background(), l, StepSpec{VUs: 2, Duration: 300 * time.Millisecond, Rampup: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.Ops["early"]; ok {
		t.Fatalf("ramp-up operations counted: %v", st.Ops["early"].Count)
	}
	if st.Ops["late"] == nil || st.Ops["late"].Count == 0 || st.RampupSeconds != 1 {
		t.Fatalf("ops %v rampup %v", st.Ops, st.RampupSeconds)
	}
}

func TestCancellationKeepsWhatWasMeasured(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var n atomic.Int64
	l := &fakeLoad{do: func(ctx context.Context, _ workload.VU, op *workload.Op) error {
		if n.Add(1) == 100 {
			cancel()
		}
		return nil
	}}
	smp := &fakeSampler{}
	st, err := runOne(t, ctx, l, StepSpec{VUs: 2, Duration: time.Hour}, smp)
	if smp.stopped.IsZero() || len(st.Series["fake.value"].V) != 2 {
		t.Fatal("the sampler was not stopped when the run was cancelled")
	}
	if !errors.Is(err, context.Canceled) || st.Complete || st.IncompleteReason == "" {
		t.Fatalf("err %v complete %v reason %q", err, st.Complete, st.IncompleteReason)
	}
	if c := st.Ops[workload.DefaultOp].Count; c < 90 || c > n.Load() {
		t.Fatalf("kept %d of %d operations", c, n.Load())
	}
}

func TestMaxErrorsStopsTheStep(t *testing.T) {
	l := &fakeLoad{do: func(context.Context, workload.VU, *workload.Op) error {
		return errors.New("relation \"nope\" does not exist")
	}}
	st, err := runOne(t, context.Background(), l, StepSpec{VUs: 2, Duration: time.Hour, MaxErrors: 5})
	if !errors.Is(err, ErrTooManyErrors) || st.Complete {
		t.Fatalf("err %v complete %v", err, st.Complete)
	}
	if len(st.ErrorSamples) != 1 || st.Ops[workload.DefaultOp].Errors < 6 || st.Ops[workload.DefaultOp].ErrorLatency == nil {
		t.Fatalf("samples %v op %+v", st.ErrorSamples, st.Ops[workload.DefaultOp])
	}
}

type fakeSampler struct{ started, stopped time.Time }

func (s *fakeSampler) Start(_ context.Context, st *result.Step) error {
	s.started = st.Window.Start
	return nil
}

func (s *fakeSampler) Stop(_ context.Context, st *result.Step) error {
	s.stopped = st.Window.End
	var ts result.TimeSeries
	ts.Add(st.Window.Start, 1)
	ts.Add(st.Window.End, 2)
	if st.Series == nil {
		st.Series = map[string]result.TimeSeries{}
	}
	st.Series["fake.value"] = ts
	return nil
}

func TestSamplerSeesTheWindow(t *testing.T) {
	l := &fakeLoad{do: func(context.Context, workload.VU, *workload.Op) error { time.Sleep(time.Millisecond); return nil }}
	s := &fakeSampler{}
	st, err := runOne(t, context.Background(), l, StepSpec{VUs: 1, Duration: 200 * time.Millisecond, Rampup: 50 * time.Millisecond}, s)
	if err != nil {
		t.Fatal(err)
	}
	if s.started.After(st.Window.Start) || !s.stopped.Equal(st.Window.End) || len(st.Series["fake.value"].V) != 2 {
		t.Fatalf("sampler saw %v..%v, window %v; series %v", s.started, s.stopped, st.Window, st.Series)
	}
	if len(st.Throughput["*"].V) == 0 {
		t.Fatal("no throughput series")
	}
}

// During a step every VU has a P of its own and there is one spare (a VU blocked in a
// system call then keeps its P); afterwards the process has its own setting back.
func TestStepHasAProcPerVU(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	vus := before + 3
	var seen atomic.Int64
	l := &fakeLoad{do: func(_ context.Context, _ workload.VU, op *workload.Op) error {
		seen.Store(int64(runtime.GOMAXPROCS(0)))
		return nil
	}}
	if _, err := runOne(t, context.Background(), l, StepSpec{VUs: vus, Iterations: 5}); err != nil {
		t.Fatal(err)
	}
	want := max(before, min(vus+1, maxProcs))
	if got := seen.Load(); got != int64(want) {
		t.Fatalf("GOMAXPROCS %d during a step of %d VUs, want %d", got, vus, want)
	}
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Fatalf("GOMAXPROCS %d after the run, want %d back", got, before)
	}
	if got := ensureProcs(100000); got != max(before, maxProcs) {
		t.Fatalf("ensureProcs(100000) = %d, want the bound %d", got, maxProcs)
	}
}

// Steps that overlap share GOMAXPROCS: it stays raised until the last one ends, and then
// goes back to the setting from before the first.
func TestOverlappingStepsRestoreProcs(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	doneA := raiseProcs(before + 5)
	doneB := raiseProcs(before + 2)
	if got := runtime.GOMAXPROCS(0); got != max(before, min(before+6, maxProcs)) {
		t.Fatalf("GOMAXPROCS %d with two steps running, want the larger step's", got)
	}
	doneA()
	if got := runtime.GOMAXPROCS(0); got == before && before < maxProcs {
		t.Fatal("GOMAXPROCS went back while a step was still running")
	}
	doneB()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Fatalf("GOMAXPROCS %d after both steps, want %d back", got, before)
	}
}

// slowSampler's Start takes a while, as a sampler that connects to every server on a busy
// machine takes seconds; it notes the operations done by its start and its end, and when it
// ended.
type slowSampler struct {
	ops        *atomic.Int64
	atEnd      int64
	ended      time.Time
	windowSeen time.Time
}

func (s *slowSampler) Start(_ context.Context, st *result.Step) error {
	s.windowSeen = st.Window.Start
	time.Sleep(100 * time.Millisecond)
	s.atEnd, s.ended = s.ops.Load(), time.Now()
	return nil
}

func (s *slowSampler) Stop(context.Context, *result.Step) error { return nil }

// The window opens once the samplers have started: their start-up (1.2 s on a busy
// machine, in a 3 s window, broke Little's law by that share when the window held it
// without load) is not in it, and no operation of the window comes before a sampler's
// first reading (one counted by the load but not by the server's counters would set their
// cross-checks off). With ramp-up, with none, at a fixed rate: every operation counts once.
func TestWindowOpensOnceSamplersStarted(t *testing.T) {
	for _, spec := range []StepSpec{
		{VUs: 2, Iterations: 20},
		{VUs: 2, Iterations: 20, Rate: 1000},
		{VUs: 2, Duration: 300 * time.Millisecond, Rampup: 100 * time.Millisecond},
	} {
		var ops atomic.Int64
		l := &fakeLoad{do: func(context.Context, workload.VU, *workload.Op) error { ops.Add(1); return nil }}
		s := &slowSampler{ops: &ops}
		st, err := runOne(t, context.Background(), l, spec, s)
		if err != nil {
			t.Fatal(err)
		}
		if st.Window.Start.Before(s.ended) || s.windowSeen.After(st.Window.Start) {
			t.Fatalf("%+v: window from %v; the sampler was told %v and started until %v", spec, st.Window.Start, s.windowSeen, s.ended)
		}
		measured := st.Ops[workload.DefaultOp].Count
		if spec.Rampup == 0 && (s.atEnd != 0 || measured != 40 || ops.Load() != 40) {
			t.Fatalf("%+v: %d operations by the sampler's start-up's end; %d counted of %d done, want 40", spec, s.atEnd, measured, ops.Load())
		}
		if spec.Rampup > 0 && (measured == 0 || measured > ops.Load()-s.atEnd) {
			t.Fatalf("%+v: %d counted of %d done, %d of them before the window opened", spec, measured, ops.Load(), s.atEnd)
		}
	}
}

// lander is a worker that reports fixed landings.
type lander []workload.Landing

func (l lander) Do(context.Context, *workload.Op) error { return nil }
func (l lander) Landings() []workload.Landing           { return l }

// landed prints sessions as "node/role count ops" ("–" for ops not placed).
func landed(ss []result.Sessions) string {
	var parts []string
	for _, s := range ss {
		ops := "–"
		if s.Ops != nil {
			ops = fmt.Sprint(*s.Ops)
		}
		parts = append(parts, fmt.Sprintf("%s/%v %d %s", s.Node, s.InRecovery, s.Count, ops))
	}
	return strings.Join(parts, ", ")
}

// Sessions on a node found in both roles come in one order, the standby's first, whatever
// order the map of counts gives them in.
func TestLandingsInOneOrder(t *testing.T) {
	ws := []workload.Worker{
		lander{{Node: "b", InRecovery: false}}, lander{{Node: "a"}}, lander{{Node: "b", InRecovery: true}},
		lander{{Node: "b", InRecovery: true}},
	}
	want := "a/false 1 0, b/true 2 0, b/false 1 0"
	for range 50 {
		ms := make([]madeSessions, len(ws))
		for i, w := range ws {
			ms[i].begin(w)
		}
		if got := landed(sessions(ms)); got != want {
			t.Fatalf("sessions %s, want %s", got, want)
		}
	}
}

// movingWorker loses its session at its 10th operation and makes it again on another node,
// as a session through a listener does across a failover.
type movingWorker struct {
	n    int
	node string
	lost bool
}

func (w *movingWorker) Do(context.Context, *workload.Op) error {
	w.n++
	if w.n == 10 {
		w.lost = true
		return errors.New("server closed the connection")
	}
	return nil
}
func (w *movingWorker) Landings() []workload.Landing    { return []workload.Landing{{Node: w.node}} }
func (w *movingWorker) Lost() bool                      { return w.lost }
func (w *movingWorker) Reconnect(context.Context) error { w.lost, w.node = false, "new"; return nil }
func (l *movingLoad) NewWorker(context.Context, workload.VU) (workload.Worker, error) {
	return &movingWorker{node: "old"}, nil
}

type movingLoad struct{}

// Every session a step made is counted where it landed, those made again after a loss
// included, with the operations each ran: 9 before the loss on the old node and the failed
// one, 40 after on the new one, for each of two VUs (the old node's were once counted
// nowhere, and only the last session kept).
func TestSessionsMadeAgainAreCounted(t *testing.T) {
	st, err := runOne(t, context.Background(), &movingLoad{}, StepSpec{VUs: 2, Iterations: 50})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := landed(st.Sessions), "new/false 2 80, old/false 2 20"; got != want {
		t.Fatalf("sessions %s, want %s", got, want)
	}
	if st.Complete || !strings.HasPrefix(st.IncompleteReason, result.FaultPrefix) {
		t.Errorf("a step whose sessions were lost: complete %v (%q); want it cut by a fault", st.Complete, st.IncompleteReason)
	}
}

// TestSubmittedCountsTheQueue: an operation that a request submitted before Do began (a
// transaction monitor's queue) is measured from its submission, and an idle wait inside Do
// for the request is no part of it when the request came later. An idle operation's own
// time is microseconds, but a busy machine can leave its goroutine unscheduled for longer
// than the wait (82 ms was seen under the race detector at load 29): the shortest of ten
// is judged, which counting the wait would put at 40 ms or more.
func TestSubmittedCountsTheQueue(t *testing.T) {
	t.Parallel()
	const queued = 40 * time.Millisecond
	l := &fakeLoad{do: func(ctx context.Context, vu workload.VU, op *workload.Op) error {
		if vu.ID == 0 {
			op.Name, op.Submitted = "queued", time.Now().Add(-queued)
			return nil
		}
		if !sleep(ctx, queued) {
			return ctx.Err()
		}
		op.Name, op.Submitted = "idle", time.Now()
		return nil
	}}
	const n = 10
	st, err := runOne(t, context.Background(), l, StepSpec{VUs: 2, Iterations: n})
	if err != nil {
		t.Fatal(err)
	}
	if q := st.Ops["queued"]; q == nil || q.Count != n || time.Duration(q.Latency.Min)*time.Microsecond < queued {
		t.Fatalf("queued ops %+v: want %d of at least %v", q, n, queued)
	}
	if i := st.Ops["idle"]; i == nil || i.Count != n || time.Duration(i.Latency.Min)*time.Microsecond >= queued {
		t.Fatalf("idle ops %+v: want %d, the shortest below %v", i, n, queued)
	}
}

// stopSlowly's Stop takes its time, as the database sampler's waits for idle backends to
// flush their statistics; closeAtClose notes when its CloseWindow ran and with what end.
type stopSlowly struct{ took time.Duration }

func (s *stopSlowly) Start(context.Context, *result.Step) error { return nil }
func (s *stopSlowly) Stop(context.Context, *result.Step) error {
	time.Sleep(s.took)
	return nil
}

type closeAtClose struct {
	closedAt, end, stoppedAt time.Time
}

func (s *closeAtClose) Start(context.Context, *result.Step) error { return nil }
func (s *closeAtClose) CloseWindow(_ context.Context, end time.Time) {
	s.closedAt, s.end = time.Now(), end
}
func (s *closeAtClose) Stop(context.Context, *result.Step) error {
	s.stoppedAt = time.Now()
	return nil
}

// A sampler that reads at the window's close does so before the other samplers' Stops,
// however long those take, and is told the window's end; its Stop comes in its turn.
func TestWindowClosersReadBeforeSlowStops(t *testing.T) {
	l := &fakeLoad{do: func(context.Context, workload.VU, *workload.Op) error { time.Sleep(time.Millisecond); return nil }}
	slow, closer := &stopSlowly{took: 300 * time.Millisecond}, &closeAtClose{}
	st, err := runOne(t, context.Background(), l, StepSpec{VUs: 1, Duration: 100 * time.Millisecond}, slow, closer)
	if err != nil {
		t.Fatal(err)
	}
	if closer.closedAt.IsZero() || !closer.end.Equal(st.Window.End) {
		t.Fatalf("CloseWindow ran at %v with end %v; the window ended %v", closer.closedAt, closer.end, st.Window.End)
	}
	if d := closer.stoppedAt.Sub(closer.closedAt); d < slow.took {
		t.Fatalf("the closing reading came %v before the closer's Stop, want the slow Stop's %v at least: it waited for the others' Stops", d, slow.took)
	}
}
