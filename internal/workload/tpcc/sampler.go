package tpcc

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/result"
)

// Agreement thresholds between the client's counts and the server's (HammerDB's method):
// New-Orders counted by the districts' next order ids should match exactly but for the
// transactions in flight at the window's edges; pg_stat_database's commits and rollbacks are
// flushed by backends about once a second, and include other sessions.
const (
	nopmTolerance = 0.02
	tpmTolerance  = 0.05
	// tpmSlack is the server's transactions per minute that are not the workload's: the
	// samplers beside the run (a 10 Hz wait profile, this sampler's lag reads) commit their
	// own, which matter only at low rates.
	tpmSlack = 1200
	// lagInterval is how often the sampler reads the standbys' replay lag.
	lagInterval = time.Second
)

// Step counter names (result.Step.Counters).
const (
	CounterNOPM          = "nopm"
	CounterTPM           = "tpm"
	CounterServerNOPM    = "server_nopm"
	CounterServerTPM     = "server_tpm"
	CounterPrimaryTPM    = "client_primary_tpm"
	CounterRolledBack    = "rolled_back_new_orders"
	CounterReadOnStandby = result.ReadTxOnStandby // declared in internal/result, where analyze reads them
	CounterReadOnPrimary = result.ReadTxOnPrimary
	CounterLagBytesMax   = "replay_lag_max_bytes"
	CounterLagSecondsMax = "replay_lag_max_seconds"
	// CounterSQLStatePrefix starts the counters of failed transactions by SQLSTATE,
	// "errors_sqlstate_<code>": built by SQLStateCounter, taken apart by ParseSQLStateCounter.
	CounterSQLStatePrefix = "errors_sqlstate_"
)

// SQLStateCounter is the name of the counter of transactions that failed with code.
func SQLStateCounter(code string) string { return CounterSQLStatePrefix + code }

// ParseSQLStateCounter returns the SQLSTATE of a counter SQLStateCounter named; ok is false
// for any other counter.
func ParseSQLStateCounter(name string) (code string, ok bool) {
	code, ok = strings.CutPrefix(name, CounterSQLStatePrefix)
	return code, ok && code != ""
}

// Sampler reads the server's counters as each measured window opens and closes, computes
// NOPM and TPM from the client and from the server, warns when they disagree, and follows
// the standbys' replay lag during the window. It fits the runner's Sampler interface.
type Sampler struct {
	w      *Workload
	conn   *pgx.Conn
	before Counters

	stopLag chan struct{}
	lagDone chan struct{}
	mu      sync.Mutex
	lag     result.TimeSeries
	maxLagB float64
	maxLagS float64
}

// NewSampler returns the workload's sampler with its own connection to the primary, made
// now so that opening a window costs only the reading of the counters.
func (w *Workload) NewSampler(ctx context.Context) (*Sampler, error) {
	c, err := Connect(ctx, w.Primary)
	if err != nil {
		return nil, fmt.Errorf("tpcc counters: %w", err)
	}
	return &Sampler{w: w, conn: c}, nil
}

// Start resets the window's counts and reads the server's counters.
func (s *Sampler) Start(ctx context.Context, step *result.Step) error {
	s.w.win.reset()
	if s.conn == nil || s.conn.IsClosed() {
		c, err := Connect(ctx, s.w.Primary)
		if err != nil {
			return fmt.Errorf("tpcc counters: %w", err)
		}
		s.conn = c
	}
	var err error
	if s.before, err = ReadCounters(ctx, s.conn); err != nil {
		return fmt.Errorf("tpcc counters: %w", err)
	}
	s.lag, s.maxLagB, s.maxLagS = result.TimeSeries{Unit: "bytes"}, 0, 0
	s.stopLag, s.lagDone = make(chan struct{}), make(chan struct{})
	go s.followLag(ctx)
	return nil
}

// followLag reads the standbys' replay lag every lagInterval until Stop.
func (s *Sampler) followLag(ctx context.Context) {
	defer close(s.lagDone)
	t := time.NewTicker(lagInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stopLag:
			return
		case <-ctx.Done():
			return
		case now := <-t.C:
			var bytes, secs *float64
			err := s.conn.QueryRow(ctx, `SELECT max(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn))::float8,
				max(extract(epoch FROM replay_lag))::float8 FROM pg_stat_replication`).Scan(&bytes, &secs)
			if err != nil || bytes == nil {
				continue
			}
			s.mu.Lock()
			s.lag.Add(now, *bytes)
			s.maxLagB = math.Max(s.maxLagB, *bytes)
			if secs != nil {
				s.maxLagS = math.Max(s.maxLagS, *secs)
			}
			s.mu.Unlock()
		}
	}
}

// Stop reads the server's counters again and fills the step's counters and warnings.
func (s *Sampler) Stop(ctx context.Context, step *result.Step) error {
	close(s.stopLag)
	<-s.lagDone
	after, err := ReadCounters(ctx, s.conn)
	if err != nil {
		return fmt.Errorf("tpcc counters: %w", err)
	}
	min := step.Window.Seconds() / 60
	if min <= 0 {
		return nil
	}
	if step.Counters == nil {
		step.Counters = map[string]float64{}
	}
	c := step.Counters
	var newOrders, all int64
	for name, op := range step.Ops {
		all += op.Count
		if name == NewOrder.String() {
			newOrders = op.Count
		}
	}
	win := &s.w.win
	rolled := win.rolledBack.Load()
	c[CounterNOPM] = float64(newOrders-rolled) / min
	c[CounterTPM] = float64(all) / min
	c[CounterServerNOPM] = float64(after.NewOrders-s.before.NewOrders) / min
	c[CounterServerTPM] = float64(after.Xacts-s.before.Xacts) / min
	c[CounterPrimaryTPM] = float64(win.primaryXacts.Load()) / min
	c[CounterRolledBack] = float64(rolled)
	if s.w.ReadIntent {
		c[CounterReadOnStandby] = float64(win.readOnStandby.Load())
		c[CounterReadOnPrimary] = float64(win.readOnPrimary.Load())
	}
	win.mu.Lock()
	codes := make([]string, 0, len(win.errorsBySQLSTATE))
	for code, n := range win.errorsBySQLSTATE {
		c[SQLStateCounter(code)] = float64(n)
		codes = append(codes, code)
	}
	win.mu.Unlock()
	sort.Strings(codes)
	s.mu.Lock()
	if len(s.lag.T) > 0 {
		if step.Series == nil {
			step.Series = map[string]result.TimeSeries{}
		}
		step.Series["tpcc.replay_lag_bytes"] = s.lag
		c[CounterLagBytesMax] = s.maxLagB
		c[CounterLagSecondsMax] = s.maxLagS
	}
	s.mu.Unlock()
	step.Warnings = append(step.Warnings, Disagreements(c)...)
	return nil
}

// Disagreements returns warnings where the client's and the server's counts differ by more
// than the tolerances.
func Disagreements(c map[string]float64) []string {
	var out []string
	if d := relDiff(c[CounterNOPM], c[CounterServerNOPM]); d > nopmTolerance {
		out = append(out, fmt.Sprintf("NOPM: client %.0f, server (district next order ids) %.0f: %.1f%% apart",
			c[CounterNOPM], c[CounterServerNOPM], 100*d))
	}
	if d := relDiff(c[CounterPrimaryTPM], c[CounterServerTPM]); d > tpmTolerance &&
		math.Abs(c[CounterPrimaryTPM]-c[CounterServerTPM]) > tpmSlack {
		out = append(out, fmt.Sprintf("TPM: client %.0f transactions/min on the primary, server (pg_stat_database commits+rollbacks) %.0f: %.1f%% apart",
			c[CounterPrimaryTPM], c[CounterServerTPM], 100*d))
	}
	return out
}

func relDiff(a, b float64) float64 {
	m := math.Max(math.Abs(a), math.Abs(b))
	if m == 0 {
		return 0
	}
	return math.Abs(a-b) / m
}

// Close releases the sampler's connection.
func (s *Sampler) Close() {
	if s.conn != nil {
		s.conn.Close(context.Background())
	}
}
