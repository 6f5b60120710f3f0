package experiment

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/measure"
	"github.com/agbench/agbench/internal/privilege"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/sample"
	"github.com/agbench/agbench/internal/target"
)

// StaleProbeTable is the table the stale-read probe writes its rows to, in the target's
// database; it is made when missing and emptied when the probe starts.
const StaleProbeTable = "agbench_stale_probe"

// Stale-read probe pacing: a pause between probes, how often a stale read is retried,
// and how long a probe waits for its row to become visible before giving up.
const (
	staleProbeGap   = 20 * time.Millisecond
	staleRetryGap   = 500 * time.Microsecond
	staleGiveUp     = 10 * time.Second
	staleProbeLimit = 5 * time.Second // one statement or session start
)

// staleProbe is a sampler that runs the read-after-write probe beside every measured
// window (see result.StaleStep): one probe at a time, staleProbeGap apart.
type staleProbe struct {
	l      *Load
	mode   string
	writer *pgx.Conn
	ids    *atomic.Int64
	// ownKey names the primary's database as the writer dialled it: the probe's
	// transactions there are agbench's own (result.CountOwnXacts), left out of the
	// server's count of the workload's, as the samplers' are.
	ownKey string

	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	acc    staleAcc
}

// staleAcc accumulates one step's probes.
type staleAcc struct {
	nodes       map[string]*staleNodeAcc
	errors      int64
	errorSample string
}

type staleNodeAcc struct {
	reads, stale, unseen int64
	visible, session     *hdrhistogram.Histogram
}

// newStaleProbe connects the probe's writer to the primary and empties its table. The
// writer goes to the primary directly when the target names it (else through the
// listener), as tpcc's counters' session does, so that its transactions count under the
// key that session leaves agbench's own out of.
func newStaleProbe(ctx context.Context, l *Load, mode string, ids *atomic.Int64) (*staleProbe, error) {
	cs := l.Target.Primary
	if cs == "" {
		cs = l.Target.ConnString(target.ReadWrite, 0)
	}
	if cs == "" {
		return nil, errors.New("no primary to write to")
	}
	tracer := &sample.OwnXactTracer{}
	w, err := target.ConnectTraced(ctx, cs, "agbench-stale-probe", tracer)
	if err != nil {
		return nil, err
	}
	ownKey := sample.OwnXactKey(w)
	tracer.Own(ownKey)
	// A login that may not make the table runs without the probe: its figures are absent,
	// and the warning names the grant that would give them.
	if lg, missing, err := privilege.Lacks(ctx, w, staleProbeNeeds()); err != nil || len(missing) > 0 {
		w.Close(context.WithoutCancel(ctx))
		if err != nil {
			return nil, err
		}
		return nil, errors.New(privilege.Refusal(lg, "the stale-read probe", missing))
	}
	setup := []string{"CREATE TABLE IF NOT EXISTS " + StaleProbeTable + " (id bigint PRIMARY KEY)"}
	if ids.Load() == 0 {
		setup = append(setup, "TRUNCATE "+StaleProbeTable)
	}
	for _, sql := range setup {
		if _, err := w.Exec(ctx, sql); err != nil {
			w.Close(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("%s: %w", sql, err)
		}
	}
	// The standbys a target names get the table before the first probe; behind a
	// listener a read that does not find it yet is a read that missed a write.
	if err := l.Target.WaitReplayed(ctx, staleGiveUp); err != nil {
		w.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("wait for the standbys to replay %s: %w", StaleProbeTable, err)
	}
	return &staleProbe{l: l, mode: mode, writer: w, ids: ids, ownKey: ownKey}, nil
}

func (p *staleProbe) Start(ctx context.Context, step *result.Step) error {
	p.acc = staleAcc{nodes: map[string]*staleNodeAcc{}}
	ctx, p.cancel = context.WithCancel(context.WithoutCancel(ctx))
	p.done = make(chan struct{})
	readCS := p.l.ReadConnString(step.Params, 0)
	go func() {
		defer close(p.done)
		for ctx.Err() == nil {
			p.once(ctx, readCS)
			select {
			case <-ctx.Done():
			case <-time.After(staleProbeGap):
			}
		}
	}()
	return nil
}

func (p *staleProbe) Stop(ctx context.Context, step *result.Step) error {
	p.cancel()
	<-p.done
	out := result.StaleStep{Mode: p.mode, Nodes: map[string]result.StaleNode{}, Errors: p.acc.errors, ErrorSample: p.acc.errorSample}
	for name, n := range p.acc.nodes {
		sn := result.StaleNode{Reads: n.reads, Stale: n.stale, Unseen: n.unseen}
		var err error
		if sn.Visible, err = result.NewHist(n.visible); err != nil {
			return err
		}
		if sn.Session, err = result.NewHist(n.session); err != nil {
			return err
		}
		out.Nodes[name] = sn
	}
	if out.Errors > 0 {
		step.Warnings = append(step.Warnings, fmt.Sprintf("stale-read probe: %d probe(s) failed and are in no figure: %s", out.Errors, out.ErrorSample))
	}
	return step.SetExtra(result.StaleKey(p.mode), out)
}

// close ends the writer's session.
func (p *staleProbe) close() {
	if p.writer != nil {
		p.writer.Close(context.Background())
	}
}

// once runs one probe: in eventual mode the read session opens first, as a pooled
// session would be; in causal mode it opens after the commit, naming its WAL position.
// A probe cut short by the window's end is not counted.
func (p *staleProbe) once(ctx context.Context, readCS string) {
	id := p.ids.Add(1)
	var rc *pgx.Conn
	var sessionTime time.Duration
	// The read session's transactions are agbench's own when it landed on the primary.
	tracer := &sample.OwnXactTracer{}
	open := func(cs string) error {
		t0 := time.Now()
		sctx, cancel := context.WithTimeout(ctx, staleProbeLimit)
		defer cancel()
		c, err := target.ConnectTraced(sctx, cs, "agbench-stale-probe", tracer)
		if err != nil {
			return fmt.Errorf("read session: %w", err)
		}
		rc, sessionTime = c, time.Since(t0)
		return nil
	}
	defer func() {
		if rc != nil {
			rc.Close(context.WithoutCancel(ctx))
		}
	}()
	if p.mode == result.StaleEventual {
		if err := open(readCS); err != nil {
			p.fail(ctx, err)
			return
		}
	}
	committed, lsn, err := p.write(ctx, id)
	if err != nil {
		p.fail(ctx, fmt.Errorf("write: %w", err))
		return
	}
	if p.mode == result.StaleCausal {
		if err := open(target.WithMinLSN(readCS, lsn)); err != nil {
			p.fail(ctx, err)
			return
		}
	}
	seen, stale := false, false
	var visible time.Duration
	var node string
	for !seen {
		sent := time.Now()
		if sent.Sub(committed) > staleGiveUp {
			break
		}
		n, err := p.count(ctx, rc, id)
		if err == nil && node == "" {
			node, err = p.landed(ctx, rc, tracer)
		}
		if err != nil {
			p.fail(ctx, fmt.Errorf("read: %w", err))
			return
		}
		if n == 1 {
			seen = true
			if stale {
				visible = sent.Sub(committed)
			}
			break
		}
		stale = true
		select {
		case <-ctx.Done():
			return
		case <-time.After(staleRetryGap):
		}
	}
	if ctx.Err() != nil {
		return
	}
	p.record(node, stale, seen, visible, sessionTime)
}

// count reads how many rows of id the read session sees (0: the write is not visible yet).
func (p *staleProbe) count(ctx context.Context, rc *pgx.Conn, id int64) (int, error) {
	rctx, cancel := context.WithTimeout(ctx, staleProbeLimit)
	defer cancel()
	var n int
	err := rc.QueryRow(rctx, "SELECT count(*)::int FROM "+StaleProbeTable+" WHERE id = $1", id).Scan(&n)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P01" {
		err = nil // the table itself is not replayed yet: the write is not visible
	}
	return n, err
}

// landed names the node the read session landed on; on the primary, its transactions are
// agbench's own.
func (p *staleProbe) landed(ctx context.Context, rc *pgx.Conn, tracer *sample.OwnXactTracer) (string, error) {
	node, onPrimary, err := p.nodeName(ctx, rc)
	if err == nil && onPrimary {
		tracer.Own(p.ownKey)
	}
	return node, err
}

// write commits the probe's row id and says when; a causal probe also reads the WAL
// position its read must wait for.
func (p *staleProbe) write(ctx context.Context, id int64) (committed time.Time, lsn string, err error) {
	wctx, cancel := context.WithTimeout(ctx, staleProbeLimit)
	defer cancel()
	_, err = p.writer.Exec(wctx, "INSERT INTO "+StaleProbeTable+" VALUES ($1)", id)
	committed = time.Now()
	if err == nil && p.mode == result.StaleCausal {
		err = p.writer.QueryRow(wctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&lsn)
	}
	return committed, lsn, err
}

// record adds one probe's reads on node to the step's figures: stale when a read missed
// the write, the time until it was visible when it was seen at last, and the time the read
// session took to open.
func (p *staleProbe) record(node string, stale, seen bool, visible, sessionTime time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.acc.nodes[node]
	if n == nil {
		n = &staleNodeAcc{visible: measure.NewHistogram(), session: measure.NewHistogram()}
		p.acc.nodes[node] = n
	}
	n.reads++
	if stale {
		n.stale++
	}
	if seen {
		_ = n.visible.RecordValue(visible.Microseconds())
	} else {
		n.unseen++
	}
	_ = n.session.RecordValue(sessionTime.Microseconds())
}

// nodeName names the node a session landed on, as the load's sessions are named, and
// says whether it is the primary (not in recovery).
func (p *staleProbe) nodeName(ctx context.Context, c *pgx.Conn) (string, bool, error) {
	lctx, cancel := context.WithTimeout(ctx, staleProbeLimit)
	defer cancel()
	where, err := target.Land(lctx, c)
	if err != nil {
		return "", false, err
	}
	return p.l.nodeName(where), !where.InRecovery, nil
}

func (p *staleProbe) fail(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return // the window ended: not a failure of the probe
	}
	p.mu.Lock()
	p.acc.errors++
	if p.acc.errorSample == "" {
		p.acc.errorSample = err.Error()
	}
	p.mu.Unlock()
}

// StaleProbeMode checks --stale-probe against the run: the probe needs read intent, and
// its causal mode a listener that reads agbench.min_lsn (--listener, or --compare
// routing's own listeners).
func StaleProbeMode(v string, readIntent bool, tgt *target.Target, routing bool) (string, error) {
	switch strings.ToLower(v) {
	case "", "off":
		return "", nil
	case "on", result.StaleEventual, result.StaleCausal, result.StaleBoth:
	default:
		return "", agerr.BadInputf("--stale-probe %q: want eventual, causal or both", v)
	}
	mode := strings.ToLower(v)
	if mode == "on" {
		mode = result.StaleEventual
	}
	switch {
	case !readIntent && !routing:
		return "", agerr.BadInputf("--stale-probe: the probe reads with read intent; give it to the load too (--intent read-only, tpcc --read-intent, or --compare routing=off,on)")
	case tgt != nil && len(tgt.Standbys) == 0 && tgt.Listener == "" && !routing:
		return "", agerr.BadInputf("--stale-probe: no standby to read from (--cluster with standbys, --standby or --listener)")
	case mode != result.StaleEventual && tgt != nil && tgt.Listener == "" && !routing:
		return "", agerr.BadInputf("--stale-probe %s: needs a listener to route by LSN (--listener, or --compare routing=off,on)", mode)
	}
	return mode, nil
}
