// Package pgops holds what the SQL workloads (stress, scan) share: running a prepared
// statement while streaming its rows and counting rows and bytes received, and the server's
// buffer counters (pg_stat_database) summed over nodes, read before and after a step.
//
// Of agbench it imports nothing (pgx does the work); it must not import the runner, the
// cluster, the listener or the report.
//
// Imports from agbench: only internal/result.
package pgops

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/agbench/agbench/internal/result"
)

// BlockSize is PostgreSQL's default page size, used to turn buffer counts into bytes.
const BlockSize = 8192

// WorkerAppName is the application_name of workload sessions, so that a step can wait for
// them to end (and flush their statistics) before reading the server's counters.
const WorkerAppName = "agbench-worker"

// Run executes a prepared statement with text parameters, streaming the result, and returns
// the rows and bytes (column values as sent) received. It binds and executes only: the
// statement's description, learned when it was prepared, stands for the Describe that
// libpq (and pgbench -M prepared) sends with every execution, so the server does not send
// the same RowDescription again each time. Under a context that can never be done it
// runs the lean path (runLean), which reports the same.
func Run(ctx context.Context, c *pgconn.PgConn, stmt *pgconn.StatementDescription, params [][]byte) (rows, bytes int64, err error) {
	if ctx.Done() == nil && !c.IsBusy() && !c.IsClosed() && len(params) == len(stmt.ParamOIDs) {
		return runLean(c, stmt, params)
	}
	rr := c.ExecStatement(ctx, stmt, params, nil, nil)
	for rr.NextRow() {
		rows++
		for _, v := range rr.Values() {
			bytes += int64(len(v))
		}
	}
	_, err = rr.Close()
	return rows, bytes, err
}

// runLean is Run for a context that can never be done, as SessionContext hands out: the
// same Bind, Execute and Sync, written and read with pgx's protocol layer (the connection's
// pgproto3.Frontend) rather than its result reader, which for a one-row query costs as much
// client CPU as the two system calls around it. Messages other than rows, errors and the
// end (notices, parameter changes) are passed over; so pgconn's own view of the session
// (TxStatus, ParameterStatus, OnNotice) is not updated: use it for statements that leave
// no transaction open. A failure to write or read, or a FATAL error, closes the connection,
// as pgx does; when the failure is the deadline SessionContext set, the query may still be
// running on the server, and it is cancelled first, as pgx does too.
func runLean(c *pgconn.PgConn, stmt *pgconn.StatementDescription, params [][]byte) (rows, bytes int64, err error) {
	f := c.Frontend()
	f.SendBind(&pgproto3.Bind{PreparedStatement: stmt.Name, Parameters: params})
	f.SendExecute(&pgproto3.Execute{})
	f.SendSync(&pgproto3.Sync{})
	if ferr := f.Flush(); ferr != nil {
		abandon(c, ferr)
		return 0, 0, ferr
	}
	for {
		msg, rerr := f.Receive()
		if rerr != nil {
			abandon(c, rerr)
			if err != nil { // the server's error came first: it says more
				return rows, bytes, err
			}
			return rows, bytes, rerr
		}
		switch m := msg.(type) {
		case *pgproto3.DataRow:
			rows++
			for _, v := range m.Values {
				bytes += int64(len(v))
			}
		case *pgproto3.ErrorResponse:
			pe := pgconn.ErrorResponseToPgError(m)
			if err == nil {
				err = pe
			}
			sev := pe.SeverityUnlocalized
			if sev == "" { // servers before 9.6 send only the localized one
				sev = strings.ToUpper(pe.Severity)
			}
			if sev == "FATAL" || sev == "PANIC" {
				abandon(c, nil)
				return rows, bytes, err
			}
		case *pgproto3.ReadyForQuery:
			return rows, bytes, err
		}
	}
}

// abandon closes a connection whose protocol state is unknown. If why is a timeout (the
// deadline SessionContext sets to end a query in flight), the server may still be running
// the query, which would go on into whatever is measured next: it is cancelled first, with
// a CancelRequest on a connection of its own, as pgx's asyncClose does.
func abandon(c *pgconn.PgConn, why error) {
	c.Conn().SetDeadline(time.Now())
	var ne net.Error
	if errors.As(why, &ne) && ne.Timeout() {
		ctx, cancel := context.WithTimeout(context.Background(), cancelTimeout)
		_ = c.CancelRequest(ctx)
		cancel()
	}
	c.Close(context.Background())
}

// cancelTimeout bounds the CancelRequest of an abandoned query.
const cancelTimeout = 5 * time.Second

// Counters are a server's cumulative block counters for one database.
type Counters struct {
	Hits, Reads int64
}

// ReadCounters sums blks_hit and blks_read of the current database on every node given.
func ReadCounters(ctx context.Context, conns []*pgx.Conn) (Counters, error) {
	var sum Counters
	for _, c := range conns {
		var h, r int64
		err := c.QueryRow(ctx, `SELECT blks_hit, blks_read FROM pg_stat_database WHERE datname = current_database()`).Scan(&h, &r)
		if err != nil {
			return sum, fmt.Errorf("read buffer counters: %w", err)
		}
		sum.Hits += h
		sum.Reads += r
	}
	return sum, nil
}

// WaitWorkersGone waits (up to timeout) until no session named WorkerAppName is left on
// the nodes: ended sessions flush their statistics as they exit.
func WaitWorkersGone(ctx context.Context, conns []*pgx.Conn, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for _, c := range conns {
		for time.Now().Before(deadline) {
			var n int
			if err := c.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, WorkerAppName).Scan(&n); err != nil || n == 0 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		// A fresh snapshot of the statistics for the next read.
		c.Exec(ctx, `SELECT pg_stat_clear_snapshot()`)
	}
}

// StepCounters turns counters read before and after a step into a step's counters.
func StepCounters(before, after Counters, seconds float64) map[string]float64 {
	hits, reads := float64(after.Hits-before.Hits), float64(after.Reads-before.Reads)
	m := map[string]float64{result.BufferHits: hits, result.BufferReads: reads}
	if seconds > 0 {
		m[result.ServerMBps] = (hits + reads) * BlockSize / 1e6 / seconds
	}
	return m
}

// SessionContext watches a virtual user's context once per session rather than once per
// query. Given a context that can be cancelled, pgx registers a context.AfterFunc before
// every query and removes it after (about a tenth of the client's CPU in a loop of point
// queries); the session's queries run instead under a context that is never done, and the
// real one is watched here: when it ends during a query, that query is ended the way pgx
// would end it: the connection's deadline is set to now, the query is cancelled on the
// server and the connection closed. Between queries its end does nothing, so the session
// can still close cleanly (with a Terminate) afterwards.
type SessionContext struct {
	c       *pgconn.PgConn
	watched context.Context
	quiet   context.Context
	stop    func() bool
	busy    atomic.Bool
}

// NewSessionContext returns the watcher for one session.
func NewSessionContext(c *pgconn.PgConn) *SessionContext { return &SessionContext{c: c} }

// Run is pgops.Run under the session's watch of ctx.
func (s *SessionContext) Run(ctx context.Context, stmt *pgconn.StatementDescription, params [][]byte) (rows, bytes int64, err error) {
	q := s.Begin(ctx)
	rows, bytes, err = Run(q, s.c, stmt, params)
	s.End()
	return rows, bytes, err
}

// Begin marks the session busy (a query, or a transaction of several statements, is about
// to run) and returns the context to run it under (For); End marks it idle again. ctx
// ending in between cuts the session as pgx would.
func (s *SessionContext) Begin(ctx context.Context) context.Context {
	q := s.For(ctx)
	s.busy.Store(true)
	if ctx.Err() != nil {
		s.cut() // ended between For and now: the watch may have seen the session idle
	}
	return q
}

// End marks the session idle: ctx ending now leaves it be.
func (s *SessionContext) End() { s.busy.Store(false) }

// Conn is the session watched.
func (s *SessionContext) Conn() *pgconn.PgConn { return s.c }

func (s *SessionContext) cut() { s.c.Conn().SetDeadline(time.Now()) }

// For returns the context to run the session's next query under: ctx's values, without its
// cancellation, which is watched until Stop or the next For with another context.
func (s *SessionContext) For(ctx context.Context) context.Context {
	if ctx.Done() == nil {
		return ctx
	}
	if ctx != s.watched {
		s.Stop()
		s.watched, s.quiet = ctx, context.WithoutCancel(ctx)
		s.stop = context.AfterFunc(ctx, func() {
			if s.busy.Load() {
				s.cut()
			}
		})
	}
	if ctx.Err() != nil {
		return ctx // already over: let pgx refuse the query at once
	}
	return s.quiet
}

// Stop stops watching.
func (s *SessionContext) Stop() {
	if s.stop != nil {
		s.stop()
	}
	s.watched, s.quiet, s.stop = nil, nil, nil
}
