// Package stress is the SQLQueryStress workload of the articles (basic-ag-read-only-routing,
// ag-read-only-routing-s2d): each virtual user runs a query (or a file of queries, in turn)
// for its iterations, with parameters drawn from a file or a range, and reports rows and
// bytes received; the server's buffer counters around each step give MB read per second.
//
// A lost session is made again by the runner (the worker is a workload.Reconnector).
//
// It imports pgx, internal/workload and internal/workload/pgops; it must not import the
// runner, the cluster, the listener or the report.
//
// Imports from agbench: only internal/agerr, internal/workload, internal/workload/pgops.
package stress

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/internal/workload"
	"github.com/agbench/agbench/internal/workload/pgops"
)

// Name is the workload's name in the registry.
const Name = "stress"

// OpName is the name of the stress operation in results.
const OpName = "query"

// Connector opens one virtual user's session and says where it landed.
type Connector func(ctx context.Context, vu workload.VU) (*pgx.Conn, workload.Landing, error)

// Config configures the workload.
type Config struct {
	// Queries run in turn, one per operation.
	Queries []string
	// Params gives each operation's parameters ($1, $2 ...); nil for none.
	Params Params
	// Connect opens a VU's session.
	Connect Connector
	// CounterConns opens a session to every node whose buffer counters the step reads; nil
	// reads none.
	CounterConns func(ctx context.Context) ([]*pgx.Conn, error)
}

// Stress is the workload.
type Stress struct {
	cfg      Config
	counters []*pgx.Conn
	before   pgops.Counters
}

// New returns the workload.
func New(cfg Config) *Stress { return &Stress{cfg: cfg} }

// NewWorker connects and prepares the queries.
func (s *Stress) NewWorker(ctx context.Context, vu workload.VU) (workload.Worker, error) {
	if s.cfg.Connect == nil || len(s.cfg.Queries) == 0 {
		return nil, fmt.Errorf("stress: no queries or no target")
	}
	w := &worker{s: s, vu: vu, rng: rand.New(rand.NewPCG(uint64(vu.Seed), uint64(vu.ID)))}
	if err := w.connect(ctx); err != nil {
		return nil, err
	}
	return w, nil
}

// connect opens the worker's session and prepares the queries on it.
func (w *worker) connect(ctx context.Context) error {
	c, landing, err := w.s.cfg.Connect(ctx, w.vu)
	if err != nil {
		return err
	}
	stmts := make([]*pgconn.StatementDescription, 0, len(w.s.cfg.Queries))
	for i, q := range w.s.cfg.Queries {
		sd, err := c.Prepare(ctx, fmt.Sprintf("agbench_q%d", i), q)
		if err != nil {
			c.Close(context.WithoutCancel(ctx))
			return &QueryError{Index: i, Query: q, Err: err}
		}
		stmts = append(stmts, sd)
	}
	if w.sctx != nil {
		w.sctx.Stop()
	}
	w.c, w.landing, w.stmts, w.sctx = c, landing, stmts, pgops.NewSessionContext(c.PgConn())
	return nil
}

// QueryError is a query the server would not prepare.
type QueryError struct {
	Index int
	Query string
	Err   error
}

func (e *QueryError) Error() string {
	return fmt.Sprintf("query %d %q: %v", e.Index+1, e.Query, e.Err)
}

func (e *QueryError) Unwrap() error { return e.Err }

type worker struct {
	s       *Stress
	vu      workload.VU
	c       *pgx.Conn
	sctx    *pgops.SessionContext
	landing workload.Landing
	rng     *rand.Rand
	stmts   []*pgconn.StatementDescription
	n       int
	params  [][]byte // the last parameters drawn, whose storage the next draw reuses
}

// Do runs the next query.
func (w *worker) Do(ctx context.Context, op *workload.Op) error {
	op.Name = OpName
	stmt := w.stmts[w.n%len(w.stmts)]
	w.n++
	var params [][]byte
	if w.s.cfg.Params != nil {
		w.params = w.s.cfg.Params.Next(w.rng, w.params)
		params = w.params
	}
	rows, bytes, err := w.sctx.Run(ctx, stmt, params)
	op.Rows, op.Bytes = rows, bytes
	return err
}

func (w *worker) Close() error {
	w.sctx.Stop()
	return w.c.Close(context.Background())
}

// Landings says where the worker's session is (the last one, after a reconnect).
func (w *worker) Landings() []workload.Landing { return []workload.Landing{w.landing} }

// Lost reports whether the server or the network closed the session.
func (w *worker) Lost() bool { return w.c.IsClosed() }

// Reconnect opens a new session in place of a lost one and prepares the queries again.
func (w *worker) Reconnect(ctx context.Context) error {
	if !w.Lost() {
		return nil
	}
	w.c.Close(context.WithoutCancel(ctx))
	return w.connect(ctx)
}

// BeforeStep reads the nodes' buffer counters, on sessions made again when they were lost.
func (s *Stress) BeforeStep(ctx context.Context, _ map[string]string) error {
	if s.cfg.CounterConns == nil {
		return nil
	}
	for attempt := 1; ; attempt++ {
		if s.countersLost() {
			s.Close() // lost since the last read (a restart, a failover): made again
		}
		if s.counters == nil {
			cs, err := s.cfg.CounterConns(ctx)
			if err != nil {
				return err
			}
			s.counters = cs
		}
		var err error
		s.before, err = pgops.ReadCounters(ctx, s.counters)
		if err == nil || attempt > 1 || !s.countersLost() {
			return err
		}
	}
}

// AfterStep waits for the step's sessions to end and returns the buffer counters' change.
func (s *Stress) AfterStep(ctx context.Context, _ map[string]string, window time.Duration) (map[string]float64, error) {
	if s.counters == nil {
		return nil, nil
	}
	pgops.WaitWorkersGone(ctx, s.counters, 5*time.Second)
	after, err := pgops.ReadCounters(ctx, s.counters)
	if err != nil && s.countersLost() {
		s.Close()
		return nil, ErrCountersLost
	}
	if err != nil {
		return nil, err
	}
	return pgops.StepCounters(s.before, after, window.Seconds()), nil
}

// ErrCountersLost says why a step has no server buffer counters (and no server MB/s).
var ErrCountersLost = errors.New("server buffer counters absent: a counters' session was lost during the step " +
	"(a restart or a failover), and pg_stat_database's counters do not continue across it")

// countersLost reports whether the server or the network closed a counters' session.
func (s *Stress) countersLost() bool {
	for _, c := range s.counters {
		if c.IsClosed() {
			return true
		}
	}
	return false
}

// Close closes the counter sessions.
func (s *Stress) Close() error {
	for _, c := range s.counters {
		c.Close(context.Background())
	}
	s.counters = nil
	return nil
}

var _ workload.Reconnector = (*worker)(nil)
