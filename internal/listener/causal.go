package listener

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/routing"
)

// Causal routing: a read-intent session that must see a given WAL position (its own
// write's LSN, or all the primary had flushed when the session started) goes only to a
// standby that has replayed that far. The listener knows each node's position from its
// health probes (at most a probe interval old, and a lower bound since replay only moves
// forward); when that is not far enough, one poller per node (lsnWatch) reads the
// position afresh every causalPollGap while any session waits on it, so that many waiting
// sessions cost one query per gap. A standby still behind after Config.CausalWait is
// skipped for that session and the routing list's next candidate is tried, the primary
// last when it is listed. Sessions without a requirement take the path they always took.

// ConsistencyParam is the startup parameter by which a session chooses its consistency
// (eventual or session), overriding Config.Consistency for that session.
const ConsistencyParam = "agbench.consistency"

// DefaultCausalWait is how long a session waits, in all, for standbys to catch up.
const DefaultCausalWait = 50 * time.Millisecond

// causalPollGap is the pause between two reads of a node's WAL position while sessions
// wait on it.
const causalPollGap = time.Millisecond

// Consistency is what a read-intent session must see (Config.Consistency).
type Consistency uint8

// Consistencies.
const (
	// Eventual: any standby the routing list allows (the default).
	Eventual Consistency = iota
	// Session: only a standby that has replayed everything the primary had flushed when
	// the session started.
	Session
)

func (c Consistency) String() string {
	if c == Session {
		return "session"
	}
	return "eventual"
}

// ParseConsistency reads a --consistency value: eventual or session.
func ParseConsistency(s string) (Consistency, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "eventual":
		return Eventual, nil
	case "session":
		return Session, nil
	}
	return Eventual, fmt.Errorf("consistency %q: want eventual or session", s)
}

// BadParamError is a value of one of the listener's startup parameters that it cannot
// read. Code is the SQLSTATE the client gets.
type BadParamError struct {
	Param, Value, Want, Code string
}

func (e *BadParamError) Error() string {
	return fmt.Sprintf("invalid value for parameter %q: %q (want %s)", e.Param, e.Value, e.Want)
}

// causalNeed is what one session must see.
type causalNeed struct {
	// minLSN is the position the session named (0: none).
	minLSN uint64
	// session: it must see all the primary had flushed at start.
	session bool
	start   time.Time
}

func (n causalNeed) any() bool { return n.minLSN > 0 || n.session }

// takeCausal finds agbench.min_lsn and agbench.consistency in the startup parameters (as
// parameters or inside options, the last one winning), removes them, and returns what
// the session must see; def is the listener's consistency.
func takeCausal(params map[string]string, def Consistency, start time.Time) (causalNeed, error) {
	need := causalNeed{session: def == Session, start: start}
	lsns := takeParam(params, routing.MinLSNParam)
	cons := takeParam(params, ConsistencyParam)
	for _, v := range lsns {
		lsn, err := cluster.ParseLSN(strings.TrimSpace(v))
		if err != nil {
			return need, &BadParamError{Param: routing.MinLSNParam, Value: v, Want: "an LSN such as 0/3000148", Code: codeInvalidTextRepr}
		}
		need.minLSN = lsn
	}
	for _, v := range cons {
		c, err := ParseConsistency(v)
		if err != nil {
			return need, &BadParamError{Param: ConsistencyParam, Value: v, Want: "eventual or session", Code: codeInvalidParamValue}
		}
		need.session = c == Session
	}
	return need, nil
}

// FutureLSNError is a min_lsn beyond the primary's WAL: no standby will ever reach it.
type FutureLSNError struct {
	MinLSN, Primary uint64
	Node            string
}

func (e *FutureLSNError) Error() string {
	return fmt.Sprintf("%s %s is beyond the primary's WAL (%s is at %s): not waited on", routing.MinLSNParam, cluster.FormatLSN(e.MinLSN), e.Node, cluster.FormatLSN(e.Primary))
}

// lsnReading is one read of a node's WAL position.
type lsnReading struct {
	// lsn is replayed (standby) or flushed (primary); insert is the primary's insert
	// position (the standby's replay position on a standby).
	lsn, insert uint64
	inRecovery  bool
	// at is when the read was sent: the position is at least lsn from then on.
	at  time.Time
	err error
}

// watchSQL reads a node's position for causal routing.
const watchSQL = `SELECT pg_is_in_recovery(),
  CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_flush_lsn() END,
  CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_insert_lsn() END`

// lsnWatch reads one node's WAL position on its own connection while sessions wait on it.
type lsnWatch struct {
	b       Backend
	timeout time.Duration

	mu      sync.Mutex
	last    lsnReading
	waiters int
	running bool
	closed  bool
	changed chan struct{} // closed and replaced at each new reading
	kick    chan struct{} // asks the poller for a read now (a session needs a fresh one)
	conn    *pgconn.PgConn
}

func newLSNWatch(b Backend, timeout time.Duration) *lsnWatch {
	return &lsnWatch{b: b, timeout: timeout, changed: make(chan struct{}), kick: make(chan struct{}, 1)}
}

// observe takes a reading made elsewhere (the health probe) when it is newer and of a
// standby: its replay position is what causal routing compares. A primary's probe reads
// its write position, which can be behind an insert position a client read before, so
// only the poller's own reads (insert and flush positions) stand for a primary.
func (w *lsnWatch) observe(r lsnReading) {
	if !r.inRecovery {
		return
	}
	w.mu.Lock()
	if r.at.After(w.last.at) {
		w.publishLocked(r)
	}
	w.mu.Unlock()
}

func (w *lsnWatch) publishLocked(r lsnReading) {
	if r.err == nil || w.last.err == nil {
		w.last = r
	}
	if r.err != nil {
		w.last.err, w.last.at = r.err, r.at
	}
	close(w.changed)
	w.changed = make(chan struct{})
}

// known is the last good reading (its at is zero when there is none).
func (w *lsnWatch) known() lsnReading {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.last
	if r.err != nil {
		return lsnReading{}
	}
	return r
}

// await returns the first reading sent at or after since whose lsn is at least want,
// or the poller's error, or ctx's.
func (w *lsnWatch) await(ctx context.Context, since time.Time, want uint64) (lsnReading, error) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return lsnReading{}, errors.New("the listener is closing")
	}
	w.waiters++
	if !w.running {
		w.running = true
		go w.poll()
	}
	defer func() {
		w.mu.Lock()
		w.waiters--
		w.mu.Unlock()
	}()
	fresh := false
	for {
		r, ch := w.last, w.changed
		w.mu.Unlock()
		if !r.at.Before(since) && !r.at.IsZero() {
			if r.err != nil && fresh {
				return r, r.err
			}
			if r.err == nil && r.lsn >= want {
				return r, nil
			}
		}
		if !since.IsZero() && !fresh {
			select {
			case w.kick <- struct{}{}:
			default:
			}
		}
		select {
		case <-ch:
			fresh = true
		case <-ctx.Done():
			return r, ctx.Err()
		}
		w.mu.Lock()
	}
}

// poll reads the node's position while sessions wait on it, then ends.
func (w *lsnWatch) poll() {
	for {
		w.mu.Lock()
		if w.waiters == 0 || w.closed {
			w.running = false
			if w.closed && w.conn != nil {
				_ = w.conn.Close(context.Background())
				w.conn = nil
			}
			w.mu.Unlock()
			return
		}
		conn := w.conn
		w.mu.Unlock()
		r, conn := w.read(conn)
		w.mu.Lock()
		w.conn = conn
		w.publishLocked(r)
		w.mu.Unlock()
		gap := causalPollGap
		if r.err != nil {
			gap = 20 * causalPollGap
		}
		t := time.NewTimer(gap)
		select {
		case <-t.C:
		case <-w.kick:
		}
		t.Stop()
	}
}

// read reads the position once, connecting first when needed; it returns the connection
// to keep (nil after an error).
func (w *lsnWatch) read(conn *pgconn.PgConn) (lsnReading, *pgconn.PgConn) {
	ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
	defer cancel()
	at := time.Now()
	if conn == nil || conn.IsClosed() {
		var err error
		if conn, err = pgconn.Connect(ctx, w.b.ProbeConnString); err != nil {
			return lsnReading{at: at, err: errors.New(rootCause(err))}, nil
		}
		at = time.Now()
	}
	rs, err := conn.Exec(ctx, watchSQL).ReadAll()
	if err == nil && (len(rs) != 1 || len(rs[0].Rows) != 1 || len(rs[0].Rows[0]) != 3) {
		err = errors.New("unexpected result shape")
	}
	var r lsnReading
	if err == nil {
		row := rs[0].Rows[0]
		r.inRecovery = string(row[0]) == "t"
		if row[1] == nil || row[2] == nil {
			err = errors.New("no WAL position (a standby that has replayed nothing yet)")
		} else if r.lsn, err = cluster.ParseLSN(string(row[1])); err == nil {
			r.insert, err = cluster.ParseLSN(string(row[2]))
		}
	}
	if err != nil {
		_ = conn.Close(context.Background())
		return lsnReading{at: at, err: errors.New(rootCause(err))}, nil
	}
	r.at = at
	return r, conn
}

func (w *lsnWatch) close() {
	w.mu.Lock()
	w.closed = true
	if !w.running && w.conn != nil {
		_ = w.conn.Close(context.Background())
		w.conn = nil
	}
	w.mu.Unlock()
}

// causalCheck decides, for one session, whether a candidate node has replayed far enough.
type causalCheck struct {
	l    *Listener
	need causalNeed
	// target is the position to see, once known (targetSet).
	target    uint64
	targetSet bool
	// deadline ends the session's waits (set at its first wait).
	deadline time.Time
	waited   time.Duration
	skipped  int
}

// causalFor returns the check for a session, or nil when it needs none: read-write
// sessions, and read-only sessions without a requirement.
func (l *Listener) causalFor(intent routing.Intent, need causalNeed) *causalCheck {
	if intent != routing.ReadOnly || !need.any() {
		return nil
	}
	return &causalCheck{l: l, need: need}
}

// causalError is a refusal of causal routing that is not a routing list's (the LSN is
// beyond the primary's, or the primary's position cannot be read).
type causalError struct {
	fail Failure
	err  error
}

func (e *causalError) Error() string { return e.err.Error() }
func (e *causalError) Unwrap() error { return e.err }

// admit says whether node may take the session: "" when it has replayed the session's
// target (waiting for it up to what is left of Config.CausalWait), else why it is
// skipped. An error refuses the session.
func (c *causalCheck) admit(node string, nodes []routing.Node) (string, error) {
	w := c.l.watches[node]
	known := w.known()
	if !c.targetSet && !c.need.session && !known.at.IsZero() && known.lsn >= c.need.minLSN {
		return "", nil // replayed past min_lsn already: no need to ask the primary
	}
	if err := c.setTarget(nodes); err != nil {
		return "", err
	}
	if !known.at.IsZero() && known.lsn >= c.target {
		return "", nil
	}
	now := time.Now()
	if c.deadline.IsZero() {
		c.deadline = now.Add(c.l.cfg.CausalWait)
	}
	left := c.deadline.Sub(now)
	if left <= 0 {
		c.skipped++
		return fmt.Sprintf("behind: replayed %s of %s (the %s wait was spent)", lsnOr(known), cluster.FormatLSN(c.target), c.l.cfg.CausalWait), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), left)
	r, err := w.await(ctx, time.Time{}, c.target)
	cancel()
	d := time.Since(now)
	c.waited += d
	switch {
	case err == nil:
		c.l.metrics.addCausalWait(node, "caught_up", d)
		return "", nil
	case errors.Is(err, context.DeadlineExceeded):
		c.l.metrics.addCausalWait(node, "timed_out", d)
		c.skipped++
		return fmt.Sprintf("behind: replayed %s of %s after waiting %s", lsnOr(r), cluster.FormatLSN(c.target), d.Round(time.Microsecond)), nil
	default:
		c.l.metrics.addCausalWait(node, "error", d)
		c.skipped++
		return "its WAL position could not be read: " + err.Error(), nil
	}
}

func lsnOr(r lsnReading) string {
	if r.at.IsZero() || r.err != nil {
		return "an unknown position"
	}
	return cluster.FormatLSN(r.lsn)
}

// setTarget works out the position the session must see: min_lsn, checked against the
// primary's WAL, and with session consistency what the primary had flushed at the start.
func (c *causalCheck) setTarget(nodes []routing.Node) error {
	if c.targetSet {
		return nil
	}
	c.target = c.need.minLSN
	primary := ""
	for _, n := range nodes {
		if n.Up && n.Role == routing.RolePrimary {
			primary = n.Name
		}
	}
	if primary == "" {
		return &causalError{FailCausalNoPrimary, errors.New("no primary is known to read the WAL position a causal session must see")}
	}
	pw := c.l.watches[primary]
	known := pw.known()
	if c.need.session || known.at.IsZero() || known.insert < c.need.minLSN {
		ctx, cancel := context.WithTimeout(context.Background(), c.l.cfg.DialTimeout)
		r, err := pw.await(ctx, c.need.start, 0)
		cancel()
		if err != nil {
			return &causalError{FailCausalNoPrimary, fmt.Errorf("the primary %s's WAL position could not be read: %v", primary, err)}
		}
		if r.inRecovery {
			return &causalError{FailCausalNoPrimary, fmt.Errorf("%s, taken for the primary, is in recovery", primary)}
		}
		if c.need.minLSN > r.insert {
			return &causalError{FailCausalFuture, &FutureLSNError{MinLSN: c.need.minLSN, Primary: r.insert, Node: primary}}
		}
		if c.need.session {
			c.target = max(c.target, r.lsn)
		}
	}
	c.targetSet = true
	return nil
}

// CheckCausalWait validates a causal wait (--causal-wait, Config.CausalWait once its zero
// is the default): it must be positive.
func CheckCausalWait(d time.Duration) error {
	if d <= 0 {
		return agerr.BadInputf("--causal-wait %s: must be positive", d)
	}
	return nil
}

// choose picks the node for a session as the router does and, when the session must see
// a WAL position (cc), moves past standbys that have not replayed it, marking them
// skipped in *nodes. A *causalError refuses the session.
func (l *Listener) choose(intent routing.Intent, cc *causalCheck, nodes *[]routing.Node) (routing.Decision, error) {
	for {
		d, err := l.router.Choose(intent, *nodes)
		if err != nil || cc == nil || d.Primary {
			return d, err
		}
		why, err := cc.admit(d.Node, *nodes)
		if err != nil {
			return d, err
		}
		if why == "" {
			return d, nil
		}
		l.metrics.addCausalFallback(d.Node)
		*nodes = withSkip(*nodes, d.Node, why)
	}
}

// RouteCausal is Route for a session that must see a WAL position: minLSN (0: none),
// and with Session consistency all the primary has flushed now. Standbys behind it are
// waited for up to Config.CausalWait in all, then skipped. Its errors are a
// *routing.NoTargetError, a *FutureLSNError, or the primary's position not read.
func (l *Listener) RouteCausal(intent Intent, minLSN uint64, c Consistency) (name, addr string, err error) {
	nodes := l.health.routingNodes()
	cc := l.causalFor(intent, causalNeed{minLSN: minLSN, session: c == Session, start: time.Now()})
	d, err := l.choose(intent, cc, &nodes)
	if err != nil {
		return "", "", err
	}
	if cc != nil {
		l.metrics.addCausalSession(d.Node, cc.waited > 0)
	}
	return d.Node, l.backend(d.Node).Addr, nil
}
