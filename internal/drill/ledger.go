package drill

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/measure"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/runner"
)

// LedgerTable is the drill's table on the cluster's database.
const LedgerTable = "agbench_drill_ledger"

// Operation names of the ledger's load.
const (
	OpWrite = "write"
	OpRead  = "read"
)

// SQLSTATEs the client gives to errors the server did not send.
const (
	stateConnect  = "08001" // sqlclient_unable_to_establish_sqlconnection
	stateLost     = runner.ClassConnectionFailure
	stateTimedOut = "timeout"
	stateClient   = runner.ClassClient
)

// Bounds of the load's sessions. A lost session is made again after backoffMin, doubling
// to at most backoffMax: short, so that the time until writes are back is the cluster's
// to within backoffMax, not the client's patience.
const (
	connectTimeout = 2 * time.Second
	backoffMin     = 20 * time.Millisecond
	backoffMax     = 100 * time.Millisecond
)

// idStride spaces the writers' ids apart: writer w of cycle c commits c*idStride*... (see nextID).
const idStride = 1_000_000_000

// connStrings returns the writers' and readers' connection strings: through the cluster's
// listener when it has one running (listener is then true), else every node of the
// cluster as a host list, read-write for writers (they follow the primary after a
// failover), prefer-standby for readers (read intent). Node addresses never change on failover.
func connStrings(t *cluster.Topology) (write, read string, listener bool) {
	if w, r, ok := viaListener(t); ok {
		return w, r, true
	}
	var hosts, ports []string
	for _, n := range t.Nodes {
		hosts = append(hosts, n.Host)
		ports = append(ports, strconv.Itoa(n.Port))
	}
	base := fmt.Sprintf("host=%s port=%s user=%s dbname=%s passfile='%s' sslmode=disable connect_timeout=%d application_name=agbench-drill",
		strings.Join(hosts, ","), strings.Join(ports, ","), t.Superuser, t.Database,
		strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(t.PassFile), int(connectTimeout.Seconds()))
	return base + " target_session_attrs=read-write", base + " target_session_attrs=prefer-standby", false
}

// createLedger makes the ledger table on the primary (empty when it existed).
func createLedger(ctx context.Context, t *cluster.Topology) error {
	c, err := t.Connect(ctx, t.Primary())
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	_, err = c.Exec(ctx, `DROP TABLE IF EXISTS `+LedgerTable+`;
CREATE TABLE `+LedgerTable+` (id bigint PRIMARY KEY, cycle int NOT NULL, writer int NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())`)
	if err != nil {
		return err
	}
	// Readers on a standby that has not replayed the table yet would fail (42P01).
	return t.WaitCaughtUp(ctx, catchUpWait)
}

// catchUpWait bounds the wait for the standbys to replay the new ledger table.
const catchUpWait = 60 * time.Second

// DropLedger drops the ledger table on the cluster's primary.
func DropLedger(ctx context.Context, t *cluster.Topology) error {
	c, err := t.Connect(ctx, t.Primary())
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	_, err = c.Exec(ctx, `DROP TABLE IF EXISTS `+LedgerTable)
	return err
}

// tally is what one cycle's load saw: the acknowledged and in-doubt ids, every error, and
// the first successes that began after the fault.
type tally struct {
	mu      sync.Mutex
	acked   []int64
	acks    []ack
	doubt   []int64
	errors  []result.DrillError
	faultAt time.Time // zero until the fault
	// faultMissed is true when the fault did not take effect (no outage to measure).
	faultMissed bool
	firstR      time.Time // first successful read begun after the fault
	// newSrv is the new primary's server once known: the first write it acknowledges
	// after the fault ends the write outage (the old one may still acknowledge some).
	newSrv server
	// goneAt, when set, is when the killed primary's last process had exited: a write
	// acknowledged on its port that began before is the dying server's, not a restarted one's.
	goneAt time.Time
	firstW time.Time
	// recent are, before the fault, the acknowledged writes and the reads of the last
	// recentSpan: a fault seen late (observe: a question unanswered for up to stateWait) is
	// timed from before it was seen, and what was acknowledged or read since counts after it.
	recent      []ack
	recentReads []opSpan
	ackCount    atomic.Int64
	// tl counts operations per interval; events are the cycle's moments.
	tl     timeline
	events []result.DrillEvent
	// sync is what the node at the write address said of its synchronous standbys, run by
	// run of samples that said the same (syncgap.go); syncErr the sampler's last error, at
	// syncErrAt.
	sync      []syncState
	syncErr   string
	syncErrAt time.Time
	// landings are the load's new sessions after the fault, where they landed; listener
	// is true when the load goes through the cluster's listener.
	landings []landing
	listener bool
	// noReroute, when set, is why the reroute times are not measured without a listener
	// of the cluster's (observe says its own reason).
	noReroute string
	// rwAcks counts the writes acknowledged (with tpcc, every read-write transaction;
	// acked holds its New-Orders' keys, orders the New-Orders, in doubt ones too).
	rwAcks int64
	orders map[int64]order
}

// missed records that the fault did not take effect: the cycle's outage figures are absent.
func (t *tally) missed() {
	t.mu.Lock()
	t.faultMissed = true
	t.mu.Unlock()
}

// recentSpan is how far back before it was seen a fault may be timed, and so how long
// the tally keeps acknowledged writes and reads before the fault.
const recentSpan = 2 * stateWait

// opSpan is an operation's beginning and end.
type opSpan struct{ began, at time.Time }

func (t *tally) fault(at time.Time) {
	t.mu.Lock()
	t.faultAt = at
	t.events = append(t.events, result.DrillEvent{At: at, Event: result.EventFault})
	for _, a := range t.recent {
		if !a.at.Before(at) {
			t.acks = append(t.acks, a)
			t.backOn(a)
		}
	}
	for _, r := range t.recentReads {
		if !r.began.Before(at) && (t.firstR.IsZero() || r.at.Before(t.firstR)) {
			t.firstR = r.at
		}
	}
	t.recent, t.recentReads = nil, nil
	t.mu.Unlock()
}

// keep appends x to the operations kept before the fault, and drops those that ended more
// than recentSpan before it.
func keep[T any](xs []T, x T, at func(T) time.Time) []T {
	xs = append(xs, x)
	i := 0
	for i < len(xs) && at(xs[i]).Before(at(x).Add(-recentSpan)) {
		i++
	}
	return xs[i:]
}

// gone records when the killed primary's processes had all exited.
func (t *tally) gone(at time.Time) {
	t.mu.Lock()
	t.goneAt = at
	t.mu.Unlock()
}

// ack is one acknowledged commit: when it began and ended, and its server.
type ack struct {
	began, at time.Time
	srv       server
}

// server is how the drill tells a session's server: its own port (inet_server_port(), never
// a listener's, a proxy's or a port mapping's) and its postmaster's start time, as nodes on
// separate hosts or in containers may listen on one port. A start time not known (zero; a
// cluster agbench made tells its nodes by their ports) matches any.
type server struct {
	port    int
	started time.Time
}

// serverColumns select a session's server, to scan into port and started.
const serverColumns = `coalesce(inet_server_port(), 0), pg_postmaster_start_time()`

func (s server) is(o server) bool {
	return s.port == o.port && (s.started.IsZero() || o.started.IsZero() || s.started.Equal(o.started))
}

func (t *tally) ack(id int64, began, at time.Time, srv server) {
	t.mu.Lock()
	t.acked = append(t.acked, id)
	t.mu.Unlock()
	t.acknowledged(began, at, srv)
}

// acknowledged records a write the server acknowledged (a ledger row, a read-write TPC-C
// transaction): the timeline, and the first write back after the fault.
func (t *tally) acknowledged(began, at time.Time, srv server) {
	t.mu.Lock()
	t.rwAcks++
	t.tl.add(&t.tl.writes, at)
	if !t.faultAt.IsZero() {
		t.acks = append(t.acks, ack{began: began, at: at, srv: srv})
		t.backOn(t.acks[len(t.acks)-1])
	} else {
		t.recent = keep(t.recent, ack{began: began, at: at, srv: srv}, func(a ack) time.Time { return a.at })
	}
	t.mu.Unlock()
	t.ackCount.Add(1)
}

// primaryIs sets the new primary's server and finds the first write it acknowledged.
func (t *tally) primaryIs(srv server) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.newSrv = srv
	for _, a := range t.acks {
		t.backOn(a)
	}
}

func (t *tally) backOn(a ack) {
	if t.newSrv.port != 0 && a.srv.is(t.newSrv) && !a.began.Before(t.faultAt) && !a.began.Before(t.goneAt) && (t.firstW.IsZero() || a.at.Before(t.firstW)) {
		t.firstW = a.at
	}
}

func (t *tally) read(began, at time.Time) {
	t.mu.Lock()
	t.tl.add(&t.tl.reads, at)
	if t.faultAt.IsZero() {
		t.recentReads = keep(t.recentReads, opSpan{began, at}, func(s opSpan) time.Time { return s.at })
	} else if !began.Before(t.faultAt) && t.firstR.IsZero() {
		t.firstR = at
	}
	t.mu.Unlock()
}

func (t *tally) fail(op string, state string, err error, inDoubt bool, id int64) {
	t.mu.Lock()
	at := time.Now()
	t.errors = append(t.errors, result.DrillError{At: at, Op: op, SQLState: state, Message: err.Error()})
	if op == OpWrite {
		t.tl.add(&t.tl.writeErrs, at)
	} else {
		t.tl.add(&t.tl.readErr, at)
	}
	if inDoubt {
		t.doubt = append(t.doubt, id)
	}
	t.mu.Unlock()
}

// classify returns an error's SQLSTATE (or the client's class), whether the session is
// gone, and whether a commit that failed so may still have committed: the server reported
// no ERROR for it (the session was lost, or a FATAL ended it, as when a backend waiting
// for synchronous replication is terminated after its local commit).
func classify(err error) (state string, lost, inDoubt bool) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		fatal := pe.Severity == "FATAL" || pe.Severity == "PANIC"
		return pe.Code, fatal, fatal
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return stateTimedOut, true, true
	}
	if pgconn.SafeToRetry(err) { // nothing was sent
		return stateLost, true, false
	}
	return stateLost, true, true
}

// load is the ledger's virtual users of one cycle.
type load struct {
	writeURL, readURL string
	cycle             int
	commitWait        time.Duration
	// tpcc, when set, runs TPC-C terminals instead of the ledger's writers.
	tpcc  *tpccRun
	tally *tally
	reg   *measure.Registry
	stop  atomic.Bool
	wg    sync.WaitGroup
}

// start starts writers and readers; they run until stopped (between operations) or ctx ends.
func (l *load) start(ctx context.Context, writers, readers int) {
	for w := 0; w < writers; w++ {
		l.wg.Add(1)
		if l.tpcc != nil {
			go l.terminal(ctx, w, l.reg.NewHandle())
		} else {
			go l.writer(ctx, w, l.reg.NewHandle())
		}
	}
	for r := 0; r < readers; r++ {
		l.wg.Add(1)
		go l.reader(ctx, r, l.reg.NewHandle())
	}
	l.wg.Add(1)
	go l.sampleLag(ctx)
	if l.tally.listener {
		l.wg.Add(1)
		go l.probeRoutes(ctx)
	}
}

// finish stops the load after each session's operation in flight and waits for it.
func (l *load) finish() {
	l.stop.Store(true)
	l.wg.Wait()
}

func (l *load) running(ctx context.Context) bool { return ctx.Err() == nil && !l.stop.Load() }

// nextID is writer w's n-th id in cycle c: unique over the drill.
func nextID(c, w int, n int64) int64 { return (int64(c)*1000+int64(w))*idStride + n }

// session keeps one virtual user's connection, made again with backoff when lost.
type session struct {
	url     string
	op      string
	tally   *tally
	h       *measure.Handle
	conn    *pgx.Conn
	backoff time.Duration
	// srv is the session's server (through a listener, the node's it chose).
	srv server
	// connect makes the connection (nil: pgx.Connect).
	connect func(ctx context.Context, url string) (*pgx.Conn, error)
}

// get returns a connection, or nil after recording why none could be made and waiting.
func (s *session) get(ctx context.Context) *pgx.Conn {
	if s.conn != nil {
		return s.conn
	}
	began := time.Now()
	connect := s.connect
	if connect == nil {
		connect = pgx.Connect
	}
	c, err := connect(ctx, s.url)
	if err == nil {
		var standby bool
		if s.srv, standby, err = land(ctx, c); err == nil {
			s.conn, s.backoff = c, 0
			s.tally.landed(landing{op: s.op, at: time.Now(), srv: s.srv, standby: standby})
			return c
		}
		c.Close(context.Background())
	}
	if ctx.Err() == nil {
		state := stateConnect
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			state = pe.Code
		}
		s.tally.fail(s.op, state, err, false, 0)
		s.h.Record(measure.Sample{Op: s.op, Latency: time.Since(began), Err: true})
	}
	s.backoff = min(max(2*s.backoff, backoffMin), backoffMax)
	select {
	case <-ctx.Done():
	case <-time.After(s.backoff):
	}
	return nil
}

func (s *session) drop() {
	if s.conn != nil {
		s.conn.Close(context.Background())
		s.conn = nil
	}
}

func (l *load) writer(ctx context.Context, w int, h *measure.Handle) {
	defer l.wg.Done()
	s := &session{url: l.writeURL, op: OpWrite, tally: l.tally, h: h}
	defer s.drop()
	var n int64
	for l.running(ctx) {
		c := s.get(ctx)
		if c == nil {
			continue
		}
		n++
		id := nextID(l.cycle, w, n)
		began := time.Now()
		octx, cancel := context.WithTimeout(ctx, l.commitWait)
		_, err := c.Exec(octx, `INSERT INTO `+LedgerTable+` (id, cycle, writer) VALUES ($1, $2, $3)`, id, l.cycle, w)
		cancel()
		done := time.Now()
		if err == nil {
			l.tally.ack(id, began, done, s.srv)
			h.Record(measure.Sample{Op: OpWrite, Latency: done.Sub(began)})
			continue
		}
		if ctx.Err() != nil { // interrupted: the commit's fate is the checks' to find
			l.tally.fail(OpWrite, stateClient, err, true, id)
			return
		}
		state, lost, doubt := classify(err)
		l.tally.fail(OpWrite, state, err, doubt, id)
		h.Record(measure.Sample{Op: OpWrite, Latency: done.Sub(began), Err: true})
		if lost || c.IsClosed() {
			s.drop()
		}
	}
}

func (l *load) reader(ctx context.Context, r int, h *measure.Handle) {
	defer l.wg.Done()
	s := &session{url: l.readURL, op: OpRead, tally: l.tally, h: h}
	defer s.drop()
	for l.running(ctx) {
		c := s.get(ctx)
		if c == nil {
			continue
		}
		began := time.Now()
		octx, cancel := context.WithTimeout(ctx, l.commitWait)
		var rows int64
		var err error
		if l.tpcc != nil { // a read of the orders, as Order-Status does
			err = c.QueryRow(octx, `SELECT count(*) FROM (SELECT 1 FROM tpcc.orders WHERE o_w_id = 1 AND o_d_id = $1 ORDER BY o_id DESC LIMIT 100) s`, r%10+1).Scan(&rows)
		} else {
			err = c.QueryRow(octx, `SELECT count(*) FROM (SELECT 1 FROM `+LedgerTable+` WHERE cycle = $1 LIMIT 100) s`, l.cycle).Scan(&rows)
		}
		cancel()
		done := time.Now()
		if err == nil {
			l.tally.read(began, done)
			h.Record(measure.Sample{Op: OpRead, Latency: done.Sub(began), Rows: rows})
			continue
		}
		if ctx.Err() != nil {
			return
		}
		state, lost, _ := classify(err)
		l.tally.fail(OpRead, state, err, false, 0)
		h.Record(measure.Sample{Op: OpRead, Latency: done.Sub(began), Err: true})
		if lost || c.IsClosed() {
			s.drop()
		}
	}
}
