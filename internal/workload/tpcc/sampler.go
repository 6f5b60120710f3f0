package tpcc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/result"
)

// Agreement thresholds between the client's counts and the server's (HammerDB's method):
// New-Orders counted by the districts' next order ids should match exactly but for the
// transactions in flight at the window's edges. pg_stat_database's commits and rollbacks
// leave out agbench's own samplers' transactions (result.OwnXacts), and are flushed late:
// a backend flushes its counts to shared memory at most once per PGSTAT_MIN_INTERVAL
// (1000 ms in PostgreSQL 15+, src/backend/utils/activity/pgstat.c), so a count read at a
// window's edge misses up to that much of each backend's transactions. The TPM tolerance
// is therefore tpmTolerance plus that interval's share of the window (TPMTolerance).
const (
	nopmTolerance = 0.02
	tpmTolerance  = 0.02
	// pgstatFlushSec is PGSTAT_MIN_INTERVAL in seconds.
	pgstatFlushSec = 1.0
	// tpmSlack is the server's transactions per minute that are neither the workload's nor
	// the samplers' (autovacuum, other sessions), which matter only at low rates.
	tpmSlack = 120
	// lagInterval is how often the sampler reads the standbys' replay lag.
	lagInterval = time.Second
)

// Step counter names (result.Step.Counters).
const (
	CounterNOPM       = result.TPCCNOPM
	CounterTPM        = result.TPCCTPM
	CounterServerNOPM = result.TPCCServerNOPM
	CounterServerTPM  = result.TPCCServerTPM
	// CounterSamplerXacts counts agbench's own samplers' transactions on the primary's
	// database in the window, left out of server TPM.
	CounterSamplerXacts  = "server_sampler_xacts"
	CounterPrimaryTPM    = result.TPCCPrimaryTPM
	CounterRolledBack    = result.TPCCRolledBack
	CounterReadOnStandby = result.ReadTxOnStandby // declared in internal/result, where analyze reads them
	CounterReadOnPrimary = result.ReadTxOnPrimary
	CounterLagBytesMax   = result.TPCCLagBytesMax
	CounterLagSecondsMax = result.TPCCLagSecondsMax
	// CounterStatementsPerTx is the statements the client sent per transaction (BEGIN and
	// COMMIT included, a function call one, retries counted in the transaction they retry).
	CounterStatementsPerTx = "statements_per_tx"
)

// Sampler reads the server's counters as each measured window opens and closes, computes
// NOPM and TPM from the client and from the server, warns when they disagree, and follows
// the standbys' replay lag during the window. It fits the runner's Sampler interface.
//
// The client's figures come from the runner's counts and are always there. The server's
// are absent (not 0) when they could not be measured: the counters' session could not read
// them at the window's start or end, or it was lost during the window (a restart, a
// failover), after which pg_stat_database's commits do not continue the count of before.
// A warning of the step says which and why.
type Sampler struct {
	// Share says the run is one segment of several load generators: the client's counts
	// are its share, the server's the whole run's, so the two are not compared here (the
	// merge compares the segments' sums).
	Share bool

	w      *Workload
	conn   *pgx.Conn
	before *Counters
	// reopened says the counters' session was made again since the window's start.
	reopened bool
	// ownBefore is agbench's own transactions on the primary's database (result.OwnXacts)
	// at the window's start.
	ownBefore int64

	stopLag chan struct{}
	lagDone chan struct{}
	mu      sync.Mutex
	lag     result.TimeSeries
	maxLagB float64
	// maxLagS is the largest replay_lag read; lagSRead says one was read at all
	// (pg_stat_replication shows NULL before its first measurement, not a measurement, and
	// once a caught-up standby has had no WAL for a while, a lag of 0).
	maxLagS  float64
	lagSRead bool
	// lagHidden names the login when pg_stat_replication had standbys whose positions were
	// NULL to it (it lacks pg_read_all_stats): their lag is absent, and the step says why.
	lagHidden string
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

// Start resets the window's counts and reads the server's counters. A failure to read them
// is a warning of the step (the server's figures will be absent), not the sampler's: the
// client's figures are still made at Stop.
func (s *Sampler) Start(ctx context.Context, step *result.Step) error {
	s.w.win.reset()
	if s.w.mon != nil {
		s.w.mon.reset()
	}
	s.before = nil
	s.lag, s.maxLagB, s.maxLagS, s.lagSRead, s.lagHidden = result.TimeSeries{Unit: "bytes"}, 0, 0, false, ""
	s.stopLag, s.lagDone = make(chan struct{}), make(chan struct{})
	if s.ensureConn(ctx) == nil {
		s.ownBefore = result.OwnXacts(s.ownKey())
	}
	before, err := s.read(ctx)
	if err != nil {
		close(s.lagDone)
		step.Warnings = append(step.Warnings, fmt.Sprintf("%s: read at the window's start: %v", absentServer, err))
		return nil
	}
	s.before, s.reopened = &before, false
	go s.followLag(ctx)
	return nil
}

// absentServer begins the warnings of a step whose server figures could not be measured.
const absentServer = "tpcc: server NOPM and TPM absent"

// ensureConn makes the counters' session again when it was closed.
func (s *Sampler) ensureConn(ctx context.Context) error {
	if s.conn != nil && !s.conn.IsClosed() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, counterTimeout)
	defer cancel()
	c, err := Connect(ctx, s.w.Primary)
	if err != nil {
		return fmt.Errorf("connect to the primary: %w", err)
	}
	if s.conn != nil {
		s.reopened = true
	}
	s.conn = c
	return nil
}

// counterTimeout bounds the making of the counters' session again, so that a server gone
// for good does not hold up the end of a step.
const counterTimeout = 5 * time.Second

// read reads the server's counters, on a session made again when it was lost: when the
// read fails because the session was lost then, it is made again and read once more.
func (s *Sampler) read(ctx context.Context) (Counters, error) {
	if err := s.ensureConn(ctx); err != nil {
		return Counters{}, err
	}
	c, err := ReadCounters(ctx, s.conn)
	s.countOwn()
	if err != nil && s.conn.IsClosed() {
		if err := s.ensureConn(ctx); err != nil {
			return Counters{}, err
		}
		c, err = ReadCounters(ctx, s.conn)
		s.countOwn()
	}
	return c, err
}

// ownKey names the primary's database for result.OwnXacts.
func (s *Sampler) ownKey() string {
	return result.OwnXactKey(s.conn.PgConn().Conn().RemoteAddr().String(), s.conn.Config().Database)
}

// countOwn counts one transaction of the counters' session as agbench's own.
func (s *Sampler) countOwn() { result.CountOwnXacts(s.ownKey(), 1) }

// followLag reads the standbys' replay lag every lagInterval until Stop, on the counters'
// session (made again when it was lost: Stop reads nothing until this ends).
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
			if s.ensureConn(ctx) != nil {
				continue
			}
			var bytes, secs *float64
			var login string
			var hidden bool
			err := s.conn.QueryRow(ctx, `SELECT max(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn))::float8,
				max(extract(epoch FROM replay_lag))::float8, current_user::text, count(*) > 0 AND count(replay_lsn) = 0
				FROM pg_stat_replication`).Scan(&bytes, &secs, &login, &hidden)
			s.countOwn()
			if err == nil && hidden {
				s.mu.Lock()
				s.lagHidden = login
				s.mu.Unlock()
			}
			if err != nil || bytes == nil {
				continue
			}
			s.mu.Lock()
			s.lag.Add(now, *bytes)
			s.maxLagB = math.Max(s.maxLagB, *bytes)
			switch {
			case secs != nil:
				s.maxLagS = math.Max(s.maxLagS, *secs)
				s.lagSRead = true
			case *bytes <= 0: // every standby caught up: replay_lag NULL is a lag of 0 then
				s.lagSRead = true
			}
			s.mu.Unlock()
		}
	}
}

// Stop fills the step's counters: the client's figures always, the server's when both
// reads succeeded on one session, with warnings where they disagree or are absent.
func (s *Sampler) Stop(ctx context.Context, step *result.Step) error {
	close(s.stopLag)
	<-s.lagDone
	min := step.Window.Seconds() / 60
	if min <= 0 {
		return nil
	}
	if step.Counters == nil {
		step.Counters = map[string]float64{}
	}
	c := step.Counters
	s.clientCounters(step, min)
	s.serverCounters(ctx, step, min)
	if err := s.w.win.own.write(s.w, step); err != nil {
		return err
	}
	if s.w.mon != nil {
		if err := s.w.mon.write(step); err != nil {
			return err
		}
	}
	s.mu.Lock()
	if len(s.lag.T) > 0 {
		if step.Series == nil {
			step.Series = map[string]result.TimeSeries{}
		}
		step.Series["tpcc.replay_lag_bytes"] = s.lag
		c[CounterLagBytesMax] = s.maxLagB
		if s.lagSRead {
			c[CounterLagSecondsMax] = s.maxLagS
		}
	} else if s.lagHidden != "" && !s.w.LagWatched {
		step.Warnings = append(step.Warnings, fmt.Sprintf("tpcc: replication lag not measured: the login %s lacks pg_read_all_stats (pg_monitor includes it), so pg_stat_replication's lag columns are NULL for it", s.lagHidden))
	}
	s.mu.Unlock()
	if !s.Share {
		step.Warnings = append(step.Warnings, Disagreements(c, step.Window.Seconds())...)
	}
	return nil
}

// clientCounters are NOPM and TPM as the client counted them (the runner's operations).
func (s *Sampler) clientCounters(step *result.Step, min float64) {
	c := step.Counters
	var newOrders, all int64
	for name, op := range step.Ops {
		if op == nil {
			continue
		}
		all += op.Count
		if name == NewOrder.String() {
			newOrders = op.Count
		}
	}
	win := &s.w.win
	rolled := win.rolledBack.Load()
	c[CounterNOPM] = float64(newOrders-rolled) / min
	c[CounterTPM] = float64(all) / min
	c[CounterPrimaryTPM] = float64(win.primaryXacts.Load()) / min
	c[CounterRolledBack] = float64(rolled)
	if all > 0 {
		c[CounterStatementsPerTx] = float64(win.statements.Load()) / float64(all)
	}
	if s.w.ReadIntent {
		c[CounterReadOnStandby] = float64(win.readOnStandby.Load())
		c[CounterReadOnPrimary] = float64(win.readOnPrimary.Load())
	}
}

// serverCounters are NOPM from the districts' next order ids and TPM from pg_stat_database,
// read again now. The districts are data, which survive a restart or a failover; the
// commit counters belong to one server's life and do not: when the counters' session was
// lost during the window, server TPM is absent and NOPM is read on a new session.
func (s *Sampler) serverCounters(ctx context.Context, step *result.Step, min float64) {
	if s.before == nil {
		return // Start said why
	}
	after, own, err := s.readFlushed(ctx, s.w.win.primaryXacts.Load())
	if errors.Is(err, errStatsHeld) {
		// The districts' order ids are data, not statistics: NOPM holds.
		step.Counters[CounterServerNOPM] = float64(after.NewOrders-s.before.NewOrders) / min
		step.Warnings = append(step.Warnings, "tpcc: server TPM absent: the run was interrupted before "+
			"pg_stat_database had counted the workload's last transactions")
		return
	}
	if err != nil {
		step.Warnings = append(step.Warnings, fmt.Sprintf("%s: read at the window's end: %v", absentServer, err))
		return
	}
	step.Counters[CounterServerNOPM] = float64(after.NewOrders-s.before.NewOrders) / min
	if s.reopened {
		step.Warnings = append(step.Warnings, "tpcc: server TPM absent: the counters' session was lost during the window "+
			"(a restart or a failover), and pg_stat_database's commits+rollbacks do not continue across it")
		return
	}
	if own < 0 {
		step.Warnings = append(step.Warnings, "tpcc: server TPM absent: the samplers' own transactions could not be counted")
		return
	}
	step.Counters[CounterSamplerXacts] = float64(own)
	step.Counters[CounterServerTPM] = float64(after.Xacts-s.before.Xacts-own) / min
}

// readFlushed reads the server's counters at the window's end and agbench's own
// transactions since its start (-1 when they could not be counted). The VUs have stopped,
// but their backends' last commits may not be in pg_stat_database yet: an idle backend that
// flushed less than PGSTAT_MIN_INTERVAL ago holds its counts until PGSTAT_IDLE_INTERVAL
// (10 s) later (pgstat_report_stat in src/backend/utils/activity/pgstat.c, PostgreSQL 15+),
// so a count read at once could miss a second or more of the workload's transactions. The
// reading is therefore taken again, every pgstatPoll, until the server's count of the
// workload's transactions reaches the client's (client, those sent to the primary) or the
// longest a backend holds its counts has passed; past that, what is still missing is a
// true disagreement, and the cross-check says so. Extra transactions are never waited for.
func (s *Sampler) readFlushed(ctx context.Context, client int64) (Counters, int64, error) {
	deadline := time.Now().Add(pgstatHoldMax)
	for {
		// The samplers' transactions up to now are in the reading's counts (the reading's
		// own is not: it is still running), and are left out of the server's TPM.
		own := int64(-1)
		if s.ensureConn(ctx) == nil {
			own = result.OwnXacts(s.ownKey()) - s.ownBefore
		}
		after, err := s.read(ctx)
		if err != nil || own < 0 || s.reopened || after.Xacts-s.before.Xacts-own >= client || !time.Now().Before(deadline) {
			return after, own, err
		}
		select {
		case <-ctx.Done():
			return after, own, errStatsHeld
		case <-time.After(pgstatPoll):
		}
	}
}

// errStatsHeld is readFlushed's answer when the run is interrupted while the server's count
// is still short of the client's: the reading it has would give a server TPM too low.
var errStatsHeld = errors.New("interrupted while the server's statistics were held")

// pgstatHoldMax is the longest an idle backend holds its transaction counts before it
// flushes them (PGSTAT_IDLE_INTERVAL after a flush deferred by PGSTAT_MIN_INTERVAL), and
// pgstatPoll how often the end reading is taken again while the server's count is short:
// just over PGSTAT_MIN_INTERVAL, so that the counters' session flushes each of its own
// readings before the next (readings closer together would be held, counted as agbench's
// own but not yet by the server, and keep the count short of the client's).
const (
	pgstatHoldMax = 10*time.Second + time.Duration(pgstatFlushSec*float64(time.Second))
	pgstatPoll    = time.Duration(pgstatFlushSec*float64(time.Second)) + 50*time.Millisecond
)

// TPMTolerance is how far apart the client's and the server's TPM may be over a window of
// this many seconds: tpmTolerance, plus the share of the window one statistics flush
// interval is (a window's edges may miss up to that much of the server's count).
func TPMTolerance(windowSec float64) float64 {
	if windowSec <= 0 {
		return 1
	}
	return tpmTolerance + pgstatFlushSec/windowSec
}

// Disagreements returns warnings where the client's and the server's counts over a window
// of windowSec seconds differ by more than the tolerances; a figure that is absent is not
// compared.
func Disagreements(c map[string]float64, windowSec float64) []string {
	var out []string
	nopm, nok := c[CounterNOPM]
	srvNOPM, sok := c[CounterServerNOPM]
	if d := relDiff(nopm, srvNOPM); nok && sok && d > nopmTolerance {
		out = append(out, nopmApart(nopm, srvNOPM))
	}
	return append(out, tpmDisagreement(c, windowSec)...)
}

// nopmApart begins the warning of a client's NOPM apart from the server's.
func nopmApart(client, server float64) string {
	return fmt.Sprintf("NOPM: client %.0f, server (district next order ids) %.0f: %.1f%% apart", client, server, 100*relDiff(client, server))
}

// tpmDisagreement is Disagreements' TPM half.
func tpmDisagreement(c map[string]float64, windowSec float64) []string {
	var out []string
	tpm, tok := c[CounterPrimaryTPM]
	srvTPM, stok := c[CounterServerTPM]
	if d, tol := relDiff(tpm, srvTPM), TPMTolerance(windowSec); tok && stok && d > tol && math.Abs(tpm-srvTPM) > tpmSlack {
		out = append(out, fmt.Sprintf("TPM: client %.0f transactions/min on the primary, server (pg_stat_database commits+rollbacks, agbench's samplers' own left out) %.0f: %.1f%% apart (tolerance %.0f%% over a %.0f s window)",
			tpm, srvTPM, 100*d, 100*tol, windowSec))
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
