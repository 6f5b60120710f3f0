package tpcc

import (
	"context"
	"runtime"
	"sync"
	"syscall"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/measure"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/segment"
	"github.com/agbench/agbench/internal/workload"
)

// monitor is the transaction monitor between the emulated terminals and the database that
// the specification allows in the system under test: the
// terminals' requests wait in one queue, first come first served, for one of a bounded
// pool of sessions — the runner's VUs, each a server of the monitor on its own session.
// A thousand terminals thus need only as many backends as the pool has sessions.
//
// A step's servers are made (open), the first of them to run starts the terminals, and
// the last one closed stops them; what the step's window measured of the queue and the
// think times is kept in histograms the tpcc sampler resets and writes.
type monitor struct {
	w *Workload
	// cfg is the configuration of the pool's sessions.
	cfg *pgx.ConnConfig

	mu sync.Mutex
	// ready is the current step's queue: every terminal has at most one request, so it
	// never blocks with a capacity of the terminals.
	ready chan *emulated
	open  int // servers made and not yet closed
	// seg is the share of the run's terminals this process emulates (the step's VUs').
	seg     segment.Segment
	started bool
	starts  int // steps started, for the terminals' random streams
	terms   []*emulated
	// queue and think are the window's queue waits and think times by transaction: the
	// waits of the transactions the runner measured (server.Tally), those of its response
	// times' histograms, so that each transaction's response time is its wait and more.
	queue, think [numKinds]*hdrhistogram.Histogram
	// left is when each request still queued at the step's end was submitted.
	left []time.Time
}

// MonitorAppName is the application_name of the monitor's sessions (unless the connection
// string gave one of its own), so that pg_stat_activity tells them from agbench's others.
const MonitorAppName = "agbench-tpcc-monitor"

func newMonitor(w *Workload) *monitor {
	m := &monitor{w: w, cfg: w.Primary.Copy()}
	if m.cfg.RuntimeParams["application_name"] == defaultAppName {
		m.cfg.RuntimeParams["application_name"] = MonitorAppName
	}
	for k := range numKinds {
		m.queue[k], m.think[k] = measure.NewHistogram(), measure.NewHistogram()
	}
	return m
}

// serve makes a VU's worker a server of the monitor.
func (m *monitor) serve(wk *worker) *server {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.open == 0 {
		m.ready = make(chan *emulated, m.w.Terminals)
		m.seg = wk.vu.Segment
	}
	m.open++
	return &server{worker: wk, mon: m, ready: m.ready}
}

// start sets the step's terminals going, once, when its first server runs.
func (m *monitor) start() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started || m.open == 0 {
		return
	}
	m.started = true
	now := time.Now()
	lo, hi := m.seg.Range(m.w.Terminals)
	m.terms = make([]*emulated, 0, hi-lo)
	for i := lo; i < hi; i++ {
		t := m.newEmulated(i)
		t.begin(now)
		m.terms = append(m.terms, t)
	}
	m.starts++
}

// release ends a server; the last one stops the terminals and notes what was left queued.
func (m *monitor) release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.open--; m.open > 0 {
		return
	}
	for _, t := range m.terms {
		t.timer.Stop()
	}
	m.left = m.left[:0]
	for n := len(m.ready); n > 0; n-- {
		t := <-m.ready
		m.left = append(m.left, t.due)
	}
	m.terms, m.started = nil, false
}

// waited records how long a request of kind k waited for a session, bounded as the
// runner bounds its response time, so that no wait is left out that the response is in.
func (m *monitor) waited(k Kind, d time.Duration) {
	m.mu.Lock()
	_ = m.queue[k].RecordValue(min(max(d.Microseconds(), measure.MinLatencyMicros), measure.MaxLatencyMicros))
	m.mu.Unlock()
}

// thought records a think time drawn after a transaction of kind k.
func (m *monitor) thought(k Kind, d time.Duration) {
	m.mu.Lock()
	_ = m.think[k].RecordValue(max(d.Microseconds(), measure.MinLatencyMicros))
	m.mu.Unlock()
}

// reset empties the window's histograms as a window opens.
func (m *monitor) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range numKinds {
		m.queue[k].Reset()
		m.think[k].Reset()
	}
}

// write stores the window's terminal figures as the step's terminals section.
func (m *monitor) write(step *result.Step) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	wh := m.w.meta.Warehouses
	t := result.TerminalsStep{Terminals: m.seg.Count(m.w.Terminals), Sessions: step.VUs, Warehouses: wh, ThinkScale: m.w.thinkScale(),
		QueueWait: map[string]result.Hist{}, Think: map[string]result.Hist{}}
	if !m.seg.Whole() {
		t.SegmentWarehouses = m.seg.Count(wh) // Home keeps a segment's terminals on these
	}
	all := measure.NewHistogram()
	for _, k := range Kinds {
		all.Merge(m.queue[k])
		var err error
		if t.QueueWait[k.String()], err = result.NewHist(m.queue[k]); err != nil {
			return err
		}
		if t.Think[k.String()], err = result.NewHist(m.think[k]); err != nil {
			return err
		}
	}
	var err error
	if t.QueueWait[measure.AllOps], err = result.NewHist(all); err != nil {
		return err
	}
	if min := step.Window.Seconds() / 60; min > 0 {
		if op := step.Ops[NewOrder.String()]; op != nil {
			t.TpmC = float64(op.Count) / min
		}
		t.TpmCPerWarehouse = t.TpmC / float64(t.HomeWarehouses())
	}
	t.Driver = driverMemory()
	for _, at := range m.left {
		if !at.After(step.Window.End) {
			t.QueuedAtEnd++
		}
	}
	// The step's load is its terminals over the pool, which this section says: the runner's
	// VUs were the pool's sessions, no virtual users of the step's.
	step.VUs = 0
	return step.SetExtra(result.ExtraTerminals, t)
}

// sessionConfig is the configuration of a VU's session on the primary: the monitor's for a
// server of terminals.
func (w *Workload) sessionConfig() *pgx.ConnConfig {
	if w.mon != nil {
		return w.mon.cfg
	}
	return w.Primary
}

// driverMemory reads this process's memory: its peak resident set (ru_maxrss, in KiB on
// Linux) and the Go runtime's heap and total.
func driverMemory() result.DriverMemory {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	d := result.DriverMemory{HeapBytes: int64(ms.HeapInuse), GoSysBytes: int64(ms.Sys)}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		rss := ru.Maxrss * 1024
		d.PeakRSSBytes = &rss
	}
	return d
}

// thinkScale is the run's ThinkScale, 1 when unset.
func (w *Workload) thinkScale() float64 {
	if w.ThinkScale > 0 {
		return w.ThinkScale
	}
	return 1
}

// server is one VU as a server of the monitor: its session serves whichever terminal's
// request is first in the queue.
type server struct {
	*worker
	mon   *monitor
	ready chan *emulated
	// kind and wait are the last request's transaction and how long it waited in the
	// queue, recorded once the runner has measured its response (Tally).
	kind Kind
	wait time.Duration
}

// Do takes the next request from the queue and runs it for its terminal. The operation's
// latency is the specification's response time, from the terminal's submission (Submitted)
// to the answer: the wait in the queue is in it. Waiting for a request is no operation.
func (s *server) Do(ctx context.Context, op *workload.Op) error {
	s.mon.start()
	var t *emulated
	select {
	case t = <-s.ready:
	case <-ctx.Done():
		return nil
	}
	k := t.kind
	op.Name, op.Submitted = k.String(), t.due
	s.kind, s.wait = k, time.Since(t.due)
	s.sess.T = &t.in
	out, err := s.sess.Run(ctx, k)
	op.Retries = int64(out.Retries)
	s.count(ctx, k, out, err)
	if ctx.Err() == nil {
		t.answered(k, time.Now())
	}
	return err
}

// Tally records the queue wait of the request the runner just measured, when it was
// answered: the waits are those of the transactions of the response times' histograms
// (the runner's successes), no more, whatever began before the window or ended after it.
// Recorded as the request was taken up, a wait of a transaction still in flight as the
// window closed, or taken up as it was opening, was in the waits and not in the response
// times: under load, with one session, the waits' median was above the responses'.
func (s *server) Tally(_ *workload.Op, failed bool) {
	if !failed {
		s.mon.waited(s.kind, s.wait)
	}
}

// Close closes the server's session and ends its part in the monitor.
func (s *server) Close() error {
	err := s.worker.Close()
	s.mon.release()
	return err
}
