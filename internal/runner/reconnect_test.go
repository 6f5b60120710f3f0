package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/workload"
)

func TestBackoffDoublesToItsBound(t *testing.T) {
	b := Backoff{Min: 50 * time.Millisecond, Max: time.Second}
	want := []time.Duration{50, 100, 200, 400, 800, 1000, 1000, 1000}
	for i, w := range want {
		if got := b.Next(); got != w*time.Millisecond {
			t.Fatalf("wait %d: %v, want %v", i+1, got, w*time.Millisecond)
		}
	}
	odd := Backoff{Min: 300 * time.Millisecond, Max: time.Second}
	for i, w := range []time.Duration{300, 600, 1000, 1000} {
		if got := odd.Next(); got != w*time.Millisecond {
			t.Fatalf("odd wait %d: %v, want %v", i+1, got, w*time.Millisecond)
		}
	}
}

// pgErr stands for pgconn.PgError, which the runner knows only by its SQLState method.
type pgErr struct{ code, msg string }

func (e *pgErr) Error() string    { return e.msg + " (SQLSTATE " + e.code + ")" }
func (e *pgErr) SQLState() string { return e.code }

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		err  error
		lost bool
		want string
	}{
		{&pgErr{"57P01", "terminating connection due to administrator command"}, true, "57P01"},
		{fmt.Errorf("new_order: %w", &pgErr{"40001", "could not serialize"}), false, "40001"},
		{errors.New("conn closed"), true, ClassConnectionFailure},
		{errors.New("unexpected EOF"), true, ClassConnectionFailure},
		{context.DeadlineExceeded, false, ClassClient},
		{&pgErr{"", "no code"}, false, ClassClient},
	} {
		if got := Classify(c.err, c.lost); got != c.want {
			t.Errorf("Classify(%v, %v) = %q, want %q", c.err, c.lost, got, c.want)
		}
	}
}

// flakyServer is a fake server that goes down for a while: sessions made before it went
// down are lost at their next operation, and none can be made until it is back.
type flakyServer struct {
	down     atomic.Bool
	attempts atomic.Int64
	// When downAtOp is above 0, the server goes down at the downAtOp-th operation (of all
	// VUs) and comes back when each of vus VUs has failed upAfter attempts to reconnect:
	// an outage bound to what the VUs did, not to the clock.
	downAtOp, vus, upAfter int64
	ops, ready             atomic.Int64
}

type flakyLoad struct{ srv *flakyServer }

type flakyWorker struct {
	srv  *flakyServer
	lost bool
	// attempts are the times of this VU's attempts to reconnect, in its last outage.
	attempts []time.Time
	fails    int64
}

func (l *flakyLoad) NewWorker(context.Context, workload.VU) (workload.Worker, error) {
	return &flakyWorker{srv: l.srv}, nil
}

func (w *flakyWorker) Do(context.Context, *workload.Op) error {
	if w.lost {
		return errors.New("conn closed")
	}
	if n := w.srv.downAtOp; n > 0 && w.srv.ops.Add(1) == n {
		w.srv.down.Store(true)
	}
	if w.srv.down.Load() {
		w.lost = true
		w.attempts = nil
		return &pgErr{"57P01", "terminating connection due to administrator command"}
	}
	time.Sleep(time.Millisecond)
	return nil
}

func (w *flakyWorker) Lost() bool { return w.lost }

func (w *flakyWorker) Reconnect(context.Context) error {
	w.srv.attempts.Add(1)
	w.attempts = append(w.attempts, time.Now())
	if w.srv.down.Load() {
		if w.fails++; w.srv.upAfter > 0 && w.fails == w.srv.upAfter && w.srv.ready.Add(1) == w.srv.vus {
			w.srv.down.Store(false)
		}
		return errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")
	}
	w.lost = false
	return nil
}

// A session lost mid-window is made again with the backoff: one error per VU (the server's
// 57P01, not a flood of "conn closed"), reconnects counted, operations after it. The server
// goes down at the 20th operation and comes back once each VU has failed two attempts, and
// the step is of iterations, so however slow the machine the outage falls inside the step
// and ends before it. The step ran to its end without an error, but a fault cut it: it is
// incomplete, and says why.
func TestLostSessionIsMadeAgain(t *testing.T) {
	const vus, upAfter = 2, 2
	srv := &flakyServer{downAtOp: 20, vus: vus, upAfter: upAfter}
	var workers []*flakyWorker
	var mu sync.Mutex
	l := &recordingLoad{flakyLoad: &flakyLoad{srv: srv}, made: func(w *flakyWorker) {
		mu.Lock()
		workers = append(workers, w)
		mu.Unlock()
	}}
	st, err := runOne(t, context.Background(), l, StepSpec{VUs: vus, Iterations: 200, MaxErrors: 10})
	if err != nil || st.Complete || !strings.HasPrefix(st.IncompleteReason, result.FaultPrefix+"2 session(s) lost, 2 made again") {
		t.Fatalf("err %v complete %v (%q): want no error, and the step cut by a fault", err, st.Complete, st.IncompleteReason)
	}
	op := st.Ops[workload.DefaultOp]
	if op.Errors != vus || op.Count != vus*200-vus {
		t.Fatalf("op %+v: want one error per VU and the rest successes", op)
	}
	if len(st.Errors) != 1 || st.Errors[0].SQLState != "57P01" || st.Errors[0].Count != vus ||
		st.Errors[0].First.Before(st.Window.Start) || st.Errors[0].Last.Before(st.Errors[0].First) {
		t.Fatalf("error classes %+v", st.Errors)
	}
	r := st.Reconnects
	if r == nil || r.Lost != vus || r.Count != vus || r.Unrestored != 0 || r.Failed < vus*upAfter {
		t.Fatalf("reconnects %+v", r)
	}
	if len(workers) != vus {
		t.Fatalf("%d workers made", len(workers))
	}
	// Each VU tried at once, then after waits of 50, 100, 200 ms ... (never sooner: a
	// flood would show here), and succeeded at its last attempt. Its time without a session
	// is at least from its first attempt to its last.
	var sumDown, maxDown float64
	for i, w := range workers {
		if int64(len(w.attempts)) < upAfter+1 || int64(len(w.attempts)) != w.fails+1 {
			t.Fatalf("VU %d: %d attempts, %d failed", i, len(w.attempts), w.fails)
		}
		b := Backoff{Min: ReconnectMinWait, Max: ReconnectMaxWait}
		for k := 1; k < len(w.attempts); k++ {
			if gap, wait := w.attempts[k].Sub(w.attempts[k-1]), b.Next(); gap < wait {
				t.Fatalf("VU %d: attempt %d came %v after the last, before the backoff's %v", i, k+1, gap, wait)
			}
		}
		d := w.attempts[len(w.attempts)-1].Sub(w.attempts[0]).Seconds()
		sumDown += d
		maxDown = max(maxDown, d)
	}
	if int64(r.Failed) != srv.attempts.Load()-vus {
		t.Fatalf("%d failed attempts counted of %d made", r.Failed, srv.attempts.Load()-vus)
	}
	if r.MaxDownSeconds < maxDown || r.DownSeconds < sumDown || r.DownSeconds < r.MaxDownSeconds ||
		r.DownSeconds > vus*st.Window.Seconds() || r.First.Before(st.Window.Start) || r.Last.Before(r.First) || r.Last.After(st.Window.End) {
		t.Fatalf("down %v s (max %v; the VUs saw at least %v, max %v), %v..%v in %v..%v",
			r.DownSeconds, r.MaxDownSeconds, sumDown, maxDown, r.First, r.Last, st.Window.Start, st.Window.End)
	}
	var sum float64
	for _, v := range st.ErrorThroughput["*"].V {
		sum += v
	}
	if sum == 0 || len(st.ErrorThroughput["*"].V) != len(st.Throughput["*"].V) {
		t.Fatalf("error series %+v", st.ErrorThroughput["*"])
	}
}

// recordingLoad hands each flakyWorker it makes to made.
type recordingLoad struct {
	*flakyLoad
	made func(*flakyWorker)
}

func (l *recordingLoad) NewWorker(ctx context.Context, vu workload.VU) (workload.Worker, error) {
	w, err := l.flakyLoad.NewWorker(ctx, vu)
	if err == nil {
		l.made(w.(*flakyWorker))
	}
	return w, err
}

// A step whose server is down for its whole window has no successful operation: it is
// incomplete and the run fails; the sessions still lost at the end are counted.
func TestStepWithoutSuccessIsIncomplete(t *testing.T) {
	srv := &flakyServer{}
	srv.down.Store(true)
	st, err := runOne(t, context.Background(), &flakyLoad{srv: srv}, StepSpec{VUs: 2, Duration: 300 * time.Millisecond})
	if !errors.Is(err, ErrNoSuccess) || st.Complete || st.IncompleteReason == "" {
		t.Fatalf("err %v complete %v reason %q", err, st.Complete, st.IncompleteReason)
	}
	if r := st.Reconnects; r == nil || r.Lost != 2 || r.Count != 0 || r.Unrestored != 2 || r.DownSeconds < 0.4 || r.UnrestoredSeconds != r.DownSeconds {
		t.Fatalf("reconnects %+v", st.Reconnects)
	}
}

// A workload whose workers do not reconnect has no reconnect figures (absent, not zero),
// and its errors are classed as the client's.
func TestNoReconnectorNoFigures(t *testing.T) {
	var n atomic.Int64
	l := &fakeLoad{do: func(context.Context, workload.VU, *workload.Op) error {
		if n.Add(1)%10 == 0 {
			return errors.New("bad value")
		}
		return nil
	}}
	st, err := runOne(t, context.Background(), l, StepSpec{VUs: 1, Iterations: 100})
	if err != nil || st.Reconnects != nil {
		t.Fatalf("err %v reconnects %+v", err, st.Reconnects)
	}
	if len(st.Errors) != 1 || st.Errors[0].SQLState != ClassClient || st.Errors[0].Count != 10 || st.Errors[0].Message != "bad value" {
		t.Fatalf("error classes %+v", st.Errors)
	}
}

// A step of iterations has no end in time: a VU whose server does not come back gives up
// after ReconnectFor, and the step ends, incomplete, rather than waiting for ever.
func TestIterationsGiveUpALostSession(t *testing.T) {
	srv := &flakyServer{}
	var n atomic.Int64
	l := &flakyLoad{srv: srv}
	go func() {
		for n.Load() < 20 {
			time.Sleep(time.Millisecond)
		}
		srv.down.Store(true)
	}()
	type outcome struct {
		steps []result.Step
		err   error
	}
	got := make(chan outcome, 1)
	go func() {
		steps, err := Run(context.Background(), Config{
			Workload: &countingLoad{flakyLoad: l, n: &n}, Plan: Sweep{}.Plan(), Tick: 50 * time.Millisecond,
			Spec: func(Point) StepSpec {
				return StepSpec{VUs: 2, Iterations: 1_000_000, ReconnectFor: 200 * time.Millisecond}
			},
		})
		got <- outcome{steps, err}
	}()
	select {
	case o := <-got:
		if len(o.steps) != 1 {
			t.Fatalf("%d steps, err %v", len(o.steps), o.err)
		}
		s := o.steps[0]
		if !errors.Is(o.err, ErrSessionsLost) || s.Complete || s.Reconnects == nil || s.Reconnects.Unrestored != 2 {
			t.Fatalf("err %v complete %v reconnects %+v", o.err, s.Complete, s.Reconnects)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the step waited for a session that never came back")
	}
}

// countingLoad counts the operations of a flakyLoad.
type countingLoad struct {
	*flakyLoad
	n *atomic.Int64
}

type countingWorker struct {
	*flakyWorker
	n *atomic.Int64
}

func (l *countingLoad) NewWorker(ctx context.Context, vu workload.VU) (workload.Worker, error) {
	w, _ := l.flakyLoad.NewWorker(ctx, vu)
	return &countingWorker{flakyWorker: w.(*flakyWorker), n: l.n}, nil
}

func (w *countingWorker) Do(ctx context.Context, op *workload.Op) error {
	w.n.Add(1)
	return w.flakyWorker.Do(ctx, op)
}

func TestTransient(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("connect: %w", refused), true},
		{&pgErr{"57P03", "the database system is starting up"}, true},
		{&pgErr{"57P01", "terminating connection due to administrator command"}, true},
		{&pgErr{"08006", "connection failure"}, true},
		{&pgErr{"42P01", `relation "nope" does not exist`}, false},
		{&pgErr{"28P01", "password authentication failed"}, false},
		{&pgErr{"53300", "too many clients already"}, false},
		{fmt.Errorf("failed SASL auth: %w", io.ErrUnexpectedEOF), true},
		{context.Canceled, false},
		{errors.New("stress: no queries or no target"), false},
	} {
		if got := Transient(c.err); got != c.want {
			t.Errorf("Transient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// A step's set-up waits out a server that is restarting between steps, and says so.
func TestSetupWaitsForTheServer(t *testing.T) {
	n := 0
	note, err := waitServer(context.Background(), time.Second, func() error {
		if n++; n < 3 {
			return &pgErr{"57P03", "the database system is starting up"}
		}
		return nil
	})
	if err != nil || n != 3 || !strings.Contains(note, "2 failed attempts") || !strings.Contains(note, "57P03") {
		t.Fatalf("err %v after %d calls, note %q", err, n, note)
	}
	n = 0
	bad := &pgErr{"42601", "syntax error"}
	if note, err := waitServer(context.Background(), time.Second, func() error { n++; return bad }); err != bad || n != 1 || note != "" {
		t.Fatalf("a bad query was waited on: %v after %d calls, note %q", err, n, note)
	}
	start := time.Now()
	if _, err := waitServer(context.Background(), 200*time.Millisecond, func() error { return &pgErr{"57P03", "starting up"} }); err == nil || time.Since(start) > time.Second {
		t.Fatalf("waited %v, err %v", time.Since(start), err)
	}
}
