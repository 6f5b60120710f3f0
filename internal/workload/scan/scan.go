// Package scan is the articles' OLAP read ("read 1M rows from customer"): each operation
// reads N rows of a table to the client, warm or cold (the command restarts the servers and
// drops the OS cache before each step when it can), and reports rows and bytes received and
// the server's buffer hits and reads.
//
// It imports pgx, internal/workload and internal/workload/stress (whose query running it
// reuses); it must not import the runner, the cluster, the listener or the report.
//
// Imports from agbench: only internal/workload, internal/workload/stress.
package scan

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/workload"
	"github.com/agbench/agbench/internal/workload/stress"
)

// Name is the workload's name in the registry; OpName its operation's.
const (
	Name   = "scan"
	OpName = "read"
)

// Config configures the workload.
type Config struct {
	// Table is the table to read (schema-qualified or not); Rows how many rows (0: all).
	Table string
	Rows  int64
	// Connect opens a VU's session; CounterConns sessions to every node for buffer counters.
	Connect      stress.Connector
	CounterConns func(ctx context.Context) ([]*pgx.Conn, error)
	// Cold, when set, runs before each step to empty the caches (restart, drop OS cache).
	Cold func(ctx context.Context) error
}

// Query returns the statement that reads the rows.
func (c Config) Query() string {
	q := "SELECT * FROM " + pgx.Identifier(splitName(c.Table)).Sanitize()
	if c.Rows > 0 {
		q += fmt.Sprintf(" LIMIT %d", c.Rows)
	}
	return q
}

func splitName(s string) []string {
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			return []string{s[:i], s[i+1:]}
		}
	}
	return []string{s}
}

// Scan is the workload: a stress run of one query with cold-cache hooks.
type Scan struct {
	cfg   Config
	inner *stress.Stress
}

// New returns the workload.
func New(cfg Config) *Scan {
	return &Scan{cfg: cfg, inner: stress.New(stress.Config{Queries: []string{cfg.Query()}, Connect: cfg.Connect, CounterConns: cfg.CounterConns})}
}

// NewWorker connects a VU.
func (s *Scan) NewWorker(ctx context.Context, vu workload.VU) (workload.Worker, error) {
	w, err := s.inner.NewWorker(ctx, vu)
	if err != nil {
		return nil, err
	}
	return &worker{Worker: w}, nil
}

type worker struct{ workload.Worker }

func (w *worker) Do(ctx context.Context, op *workload.Op) error {
	err := w.Worker.Do(ctx, op)
	op.Name = OpName
	return err
}

func (w *worker) Close() error                 { return w.Worker.(workload.Closer).Close() }
func (w *worker) Landings() []workload.Landing { return w.Worker.(workload.Lander).Landings() }
func (w *worker) Lost() bool                   { return w.Worker.(workload.Reconnector).Lost() }
func (w *worker) Reconnect(ctx context.Context) error {
	return w.Worker.(workload.Reconnector).Reconnect(ctx)
}

// BeforeStep empties the caches when cold, then reads the buffer counters.
func (s *Scan) BeforeStep(ctx context.Context, params map[string]string) error {
	if s.cfg.Cold != nil {
		// Counter sessions do not survive a restart.
		s.inner.Close()
		if err := s.cfg.Cold(ctx); err != nil {
			return fmt.Errorf("cold cache: %w", err)
		}
	}
	return s.inner.BeforeStep(ctx, params)
}

// AfterStep returns the buffer counters' change.
func (s *Scan) AfterStep(ctx context.Context, params map[string]string, window time.Duration) (map[string]float64, error) {
	return s.inner.AfterStep(ctx, params, window)
}

// Close closes the counter sessions.
func (s *Scan) Close() error { return s.inner.Close() }

// ensure the optional interfaces are met.
var (
	_ workload.StepHooks   = (*Scan)(nil)
	_ workload.StepHooks   = (*stress.Stress)(nil)
	_ workload.Reconnector = (*worker)(nil)
)
