package sample

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/result"
)

// Database sampler defaults.
const (
	// DefaultWaitInterval is how often pg_stat_activity is sampled for wait events (10 Hz).
	DefaultWaitInterval = 100 * time.Millisecond
	// SamplerAppName is the sampler's application_name; its own sessions are left out of
	// every wait profile, so several samplers do not count each other.
	SamplerAppName = "agbench-sampler"
	// maxTopWaits is how many distinct wait events per node a step keeps in its sample section.
	maxTopWaits = 10
)

// PGNode is one server the database sampler watches.
type PGNode struct {
	Name       string
	ConnString string // libpq keyword/value or URL; credentials never leave it
}

// PGOptions tune the database sampler; zero values take the defaults.
type PGOptions struct {
	Interval     time.Duration // statistics (default DefaultInterval, 1 s)
	WaitInterval time.Duration // wait events (default DefaultWaitInterval, 100 ms)
}

// NodeInfo is what the sampler learnt of a node when it connected.
type NodeInfo = result.PGNodeInfo

// PG samples PostgreSQL nodes beside a workload over one connection per node: a wait
// profile from pg_stat_activity (10 Hz; client backends and their parallel workers), and each second pg_stat_database, pg_stat_io (16+),
// checkpoints, WAL written or replayed, and per standby the lags of pg_stat_replication and
// the stretches it was missing from it (presence.go); a node it loses is noted with when.
// A login without pg_read_all_stats (or pg_monitor) sees pg_stat_replication's lags as
// NULL: then each watched standby's lag is measured at the window's end from its own
// replay position (see lag.go), and what cannot be measured is absent with a step warning.
// It implements the runner's Sampler (Start and Stop around each measured window) and only
// reads. It is not safe for concurrent use.
type PG struct {
	opts  PGOptions
	nodes []*pgNode
	// stop ends the sampling loops between queries: cancelling a query's context would make
	// pgx close the connection, which the next window still needs.
	stop    chan struct{}
	wg      sync.WaitGroup
	started time.Time
}

// NewPG connects to every node and learns what each can report. On error it closes what
// it opened.
func NewPG(ctx context.Context, nodes []PGNode, opts PGOptions) (*PG, error) {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.WaitInterval <= 0 {
		opts.WaitInterval = DefaultWaitInterval
	}
	p := &PG{opts: opts}
	for _, n := range nodes {
		node, err := connectNode(ctx, n)
		if err != nil {
			p.Close(context.Background())
			return nil, fmt.Errorf("sampler: node %s: %w", n.Name, err)
		}
		p.nodes = append(p.nodes, node)
	}
	p.nameStandbys(ctx)
	return p, nil
}

// walReceiverName is the name a standby's WAL receiver gives itself in its primary's
// pg_stat_replication (application_name): the one of primary_conninfo when the role may
// read it, else cluster_name, else PostgreSQL's default.
const walReceiverName = `SELECT coalesce(substring((SELECT conninfo FROM pg_stat_wal_receiver LIMIT 1) FROM 'application_name=([^ ]+)'),
  nullif(current_setting('cluster_name'), ''), 'walreceiver')`

// nameStandbys lets the nodes name the standbys they see in pg_stat_replication by the
// sampler's node names (the topology's), not by the WAL receivers' application_name: one
// name per node. A name two standbys give is left as it is.
func (p *PG) nameStandbys(ctx context.Context) {
	names := map[string]string{}
	taken := map[string]int{}
	for _, n := range p.nodes {
		var walName string
		if !n.info.InRecovery || n.conn.QueryRow(ctx, walReceiverName).Scan(&walName) != nil {
			continue
		}
		names[walName] = n.info.Name
		taken[walName]++
	}
	for k := range names {
		if taken[k] > 1 {
			delete(names, k)
		}
	}
	for _, n := range p.nodes {
		n.standbyNames = names
	}
}

// Nodes describes the nodes as found when the sampler connected.
func (p *PG) Nodes() []NodeInfo {
	out := make([]NodeInfo, len(p.nodes))
	for i, n := range p.nodes {
		out[i] = n.info
	}
	return out
}

// Close closes every connection. It is safe to call more than once.
func (p *PG) Close(ctx context.Context) error {
	var errs []error
	for _, n := range p.nodes {
		if n.conn != nil {
			errs = append(errs, n.conn.Close(ctx))
			n.conn = nil
		}
	}
	return errors.Join(errs...)
}

// Start takes each node's first reading and starts sampling.
func (p *PG) Start(ctx context.Context, st *result.Step) error {
	if p.stop != nil {
		return errors.New("sampler already started")
	}
	p.started = st.Window.Start
	if p.started.IsZero() {
		p.started = time.Now()
	}
	var errs []error
	for _, n := range p.nodes {
		n.reset(p.started)
		if n.conn == nil {
			n.err = errors.New("not connected")
			continue
		}
		c, err := n.readCounters(ctx)
		if err != nil {
			n.err = err
			errs = append(errs, fmt.Errorf("node %s: %w", n.info.Name, err))
			continue
		}
		n.begin(c)
		n.startCPU()
	}
	// Sampling starts when a node could be read: one that could not (a standby stopped
	// between steps) keeps its error, which Stop reports with the step's figures. An error
	// here would leave the others' loops running under a sampler the runner takes for not
	// started, never stopped, its sessions closed under them at the end.
	started := 0
	p.stop = make(chan struct{})
	runCtx := context.WithoutCancel(ctx)
	for _, n := range p.nodes {
		if n.err == nil {
			started++
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				n.loop(runCtx, p.stop, p.opts)
			}()
		}
	}
	if started == 0 {
		p.stop = nil
		return errors.Join(errs...)
	}
	return nil
}

// Readings are how many readings of the statistics and of the wait events the window has
// taken so far on the node that took fewest, between Start and Stop:
// what a caller waits on to know that the sampler has seen its load.
func (p *PG) Readings() (stats, waits int) {
	first := true
	for _, n := range p.nodes {
		if n.conn == nil {
			continue
		}
		s, w := int(n.statReads.Load()), int(n.waitReads.Load())
		if first || s < stats {
			stats = s
		}
		if first || w < waits {
			waits = w
		}
		first = false
	}
	return stats, waits
}

// Stop ends sampling, takes each node's last reading, and adds the nodes' series to
// st.Series, their window means to st.Counters and their top wait events to the step's
// sample section (result.SampleStep).
func (p *PG) Stop(ctx context.Context, st *result.Step) error {
	if p.stop == nil {
		return errors.New("sampler not started")
	}
	close(p.stop)
	p.wg.Wait()
	p.stop = nil
	// The runner opens the window once every sampler has started, after this one's start
	// (internal/runner): a node lost, a role changed or a standby absent is told in seconds
	// of the window as it opened. The series keep their own start.
	if ws := st.Window.Start; !ws.IsZero() {
		p.started = ws
		for _, n := range p.nodes {
			if n.presence != nil {
				n.presence.start = ws
			}
		}
	}
	if st.Series == nil {
		st.Series = map[string]result.TimeSeries{}
	}
	if st.Counters == nil {
		st.Counters = map[string]float64{}
	}
	extra := result.SampleStep{Nodes: map[string]result.SampleNode{}}
	end := st.Window.End
	if end.IsZero() {
		end = time.Now()
	}
	var errs []error
	// The last reading is taken even when the run was interrupted: a step cut short keeps
	// what was measured (each query is bounded by queryTimeout).
	last := context.WithoutCancel(ctx)
	for _, n := range p.nodes {
		if n.err == nil && n.conn != nil {
			if c, err := n.readCounters(last); err != nil {
				n.err, n.errAt = err, time.Now()
			} else {
				n.record(c)
			}
		}
		if n.err != nil {
			errs = append(errs, n.lost(p.started, end))
		}
		for k, s := range n.series {
			st.Series[result.PGName(n.info.Name, k)] = *s
		}
		for k, v := range n.windowCounters(end) {
			st.Counters[result.PGName(n.info.Name, k)] = v
		}
		info := n.info
		if cores, ok := n.stopCPU(); ok {
			st.Counters[result.PGName(n.info.Name, result.PGServerCPUCores)] = cores
		} else if info.ServerCPUAbsent == "" && n.cpuErr != nil {
			info.ServerCPUAbsent = n.cpuErr.Error()
		}
		sn := result.SampleNode{Info: info, TopWaits: n.topWaits(), WaitSamples: n.waitSamples, Absences: n.presence.result(end)}
		if !n.errAt.IsZero() {
			at := n.errAt.Sub(p.started).Seconds()
			sn.LostAt = &at
		}
		extra.Nodes[n.info.Name] = sn
	}
	p.lag(st, extra)
	p.roleWarnings(st)
	if err := putExtra(st, extra); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// pgNode is one node's connection and what has been sampled of it in the current window.
type pgNode struct {
	info        NodeInfo
	conn        *pgx.Conn
	start       time.Time
	first, prev pgCounters
	series      map[string]*result.TimeSeries
	err         error
	// errAt is when sampling the node failed in the window (zero: it did not, or at its start).
	errAt time.Time
	// wait profile: counts per class in the current bucket and per event over the window
	bucket      map[string]int
	bucketN     int
	events      map[[3]string]int
	waitSamples int
	classTotal  map[string]int
	// lagReads are each standby's replay lags that readings of the window measured in
	// pg_stat_replication (lagOf), in the order read.
	lagReads map[string][]lagRead
	// positions are the node's WAL positions over time, across windows (positions.go).
	positions []posRead
	// roleChanges are the node's changes of role seen in the window (roles.go).
	roleChanges []roleChange
	// presence follows the standbys of its pg_stat_replication (presence.go).
	presence *presence
	// standbyNames maps a WAL receiver's application_name to the sampler's name of its node.
	standbyNames map[string]string
	// procs is the server's postmaster on this host (info.Postmaster 0: not found);
	// cpuFirst its CPU seconds at the window's start, cpuAt when read.
	procs    serverProcs
	cpuFirst float64
	cpuAt    time.Time
	cpuErr   error
	// statReads and waitReads count the window's readings of the statistics and of the
	// wait events so far, for whoever waits on the sampler while its loop runs (Readings).
	statReads, waitReads atomic.Int64
}

func connectNode(ctx context.Context, n PGNode) (*pgNode, error) {
	cfg, err := pgx.ParseConfig(n.ConnString)
	if err != nil {
		return nil, err
	}
	cfg.RuntimeParams["application_name"] = SamplerAppName
	tracer := &OwnXactTracer{}
	cfg.Tracer = tracer
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	tracer.Own(OwnXactKey(conn))
	node := &pgNode{info: NodeInfo{Name: n.Name}, conn: conn}
	err = conn.QueryRow(ctx, `SELECT current_setting('server_version_num')::int, pg_is_in_recovery(),
		pg_size_bytes(current_setting('shared_buffers')),
		(SELECT coalesce(sum(pg_database_size(oid)), 0)::bigint FROM pg_database WHERE datallowconn),
		to_regclass('pg_catalog.pg_stat_io') IS NOT NULL`).Scan(
		&node.info.VersionNum, &node.info.InRecovery, &node.info.SharedBuffersBytes, &node.info.DatabaseBytes, &node.info.HasStatIO)
	if err != nil {
		conn.Close(ctx)
		return nil, err
	}
	// Other sessions' statistics (pg_stat_replication's positions and lags) need the
	// privileges of pg_read_all_stats.
	err = conn.QueryRow(ctx, `SELECT current_user::text, pg_has_role(current_user, 'pg_read_all_stats', 'USAGE')`).Scan(
		&node.info.Login, &node.info.ReadAllStats)
	if err != nil {
		conn.Close(ctx)
		return nil, err
	}
	// The data directory needs superuser or pg_read_all_settings; without it, no device.
	var dir string
	if conn.QueryRow(ctx, `SELECT current_setting('data_directory')`).Scan(&dir) == nil {
		node.info.DataDirectory = dir
	}
	node.procs, node.info.Remote, node.info.ServerCPUAbsent = locateServer(ctx, conn, "/proc")
	node.info.Postmaster = node.procs.postmaster
	return node, nil
}

// lost words why sampling the node ended early: when the query that failed ran, in seconds of
// the window that opened at started, and until when its figures reach (its last good reading,
// a second or so before: the loss itself lies between the two). A loss first seen by the
// closing reading is said to be so, never dated at a moment the sampler did not see.
func (n *pgNode) lost(started, end time.Time) error {
	if n.errAt.IsZero() {
		return fmt.Errorf("node %s: %w", n.info.Name, n.err)
	}
	cover := "it has no figures in the window"
	if upTo := n.prev.at.Sub(started).Seconds(); upTo > 0 {
		cover = fmt.Sprintf("its figures cover the window until %.1f s", upTo)
	}
	if n.errAt.Before(end) {
		return fmt.Errorf("node %s: lost at %.1f s of the window (%w): %s",
			n.info.Name, n.errAt.Sub(started).Seconds(), n.err, cover)
	}
	return fmt.Errorf("node %s: lost by the window's close at %.1f s (its closing reading failed: %w): %s",
		n.info.Name, end.Sub(started).Seconds(), n.err, cover)
}

func (n *pgNode) reset(start time.Time) {
	n.start, n.err, n.errAt = start, nil, time.Time{}
	n.series = map[string]*result.TimeSeries{}
	n.bucket, n.bucketN = map[string]int{}, 0
	n.events, n.classTotal, n.waitSamples = map[[3]string]int{}, map[string]int{}, 0
	n.lagReads = map[string][]lagRead{}
	n.roleChanges = nil
	n.presence = newPresence(start)
	n.statReads.Store(0)
	n.waitReads.Store(0)
}

// begin takes the window's first reading.
func (n *pgNode) begin(c pgCounters) {
	n.first, n.prev = c, c
	n.presence.note(c)
	n.noteLag(c)
	n.notePosition(c.position(), true)
}

// lagRead is a standby's replay lag, in seconds, as one reading measured it, and (from
// positions) the bytes it was behind then.
type lagRead struct {
	at     time.Time
	lag    float64
	behind int64
	within float64 // how far lag may be off (lagAt); 0 when not known to be off
}

// noteLag keeps the replay lags a reading measured (lagOf). pg_stat_replication shows NULL
// before the walsender's first lag sample, so a reading may measure no lag of a standby
// that others of the window did.
func (n *pgNode) noteLag(c pgCounters) {
	for name, s := range c.standbys {
		if lag, ok := s.lagOf(); ok {
			n.lagReads[name] = append(n.lagReads[name], lagRead{at: c.at, lag: lag})
		}
	}
}

// lagOf is a standby's replay lag in pg_stat_replication: replay_lag, or 0 when it showed
// NULL with the standby at the primary's WAL position (it does so once a standby has replayed
// all WAL in two replies running: caught up is a lag measured, of 0); not measured when
// replay_lag is NULL while the standby is behind (before the walsender's first lag sample).
func (s standbyState) lagOf() (float64, bool) {
	switch {
	case s.replayLag != nil:
		return *s.replayLag, true
	case s.behind <= 0:
		return 0, true
	}
	return 0, false
}

// windowLag is a standby's lag over the window from its reads: the read at the last
// moment before the window's end (the load stops at the end, and a standby then catches
// up; the last read there is taken when none before it measured), and the lag gained per
// second from the first read to it (grew false: no two reads apart in time).
func windowLag(reads []lagRead, end time.Time) (last lagRead, growth float64, grew, ok bool) {
	if len(reads) == 0 {
		return lagRead{}, 0, false, false
	}
	last = reads[len(reads)-1]
	for i := len(reads) - 1; i >= 0; i-- {
		if !reads[i].at.After(end) {
			last = reads[i]
			break
		}
	}
	first := reads[0]
	if last.at.After(first.at) {
		return last, (last.lag - first.lag) / last.at.Sub(first.at).Seconds(), true, true
	}
	return last, 0, false, true
}

// queryTimeout bounds each sampling query; a server too slow to answer it is reported.
const queryTimeout = 10 * time.Second

func (n *pgNode) loop(ctx context.Context, stop <-chan struct{}, o PGOptions) {
	waitT := time.NewTicker(o.WaitInterval)
	statT := time.NewTicker(o.Interval)
	defer waitT.Stop()
	defer statT.Stop()
	for {
		select {
		case <-stop:
			return
		case <-waitT.C:
			if err := n.sampleWaits(ctx); err != nil {
				n.err, n.errAt = err, time.Now()
				return
			}
			n.waitReads.Add(1)
		case <-statT.C:
			c, err := n.readCounters(ctx)
			if err != nil {
				n.err, n.errAt = err, time.Now()
				return
			}
			n.record(c)
			n.statReads.Add(1)
		}
	}
}

const waitsQuery = `SELECT coalesce(wait_event_type, ''), coalesce(wait_event, ''), coalesce(state, ''), count(*)::int
FROM pg_stat_activity
WHERE backend_type IN ('client backend', 'parallel worker') AND pid <> pg_backend_pid() AND application_name <> '` + SamplerAppName + `'
  AND state IN ('active', 'idle in transaction', 'idle in transaction (aborted)')
GROUP BY 1, 2, 3`

// sampleWaits reads the sessions' wait events and, in the same round trip, the node's WAL
// position (positions.go).
func (n *pgNode) sampleWaits(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	b := &pgx.Batch{}
	var pos posRead
	var lsn *int64
	b.Queue(positionQuery).QueryRow(func(r pgx.Row) error { return r.Scan(&pos.inRecovery, &lsn) })
	b.Queue(waitsQuery).Query(func(rows pgx.Rows) error {
		var typ, event, state string
		var count int
		_, err := pgx.ForEachRow(rows, []any{&typ, &event, &state, &count}, func() error {
			class := ClassifyWait(typ, event, state)
			n.bucket[class] += count
			n.classTotal[class] += count
			if state != "active" {
				event = state // idle in transaction: the client holds a transaction open
			}
			n.events[[3]string{typ, event, class}] += count
			return nil
		})
		return err
	})
	before := time.Now()
	if err := n.conn.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	if lsn != nil {
		pos.at, pos.lsn = midpoint(before, time.Now()), *lsn
		n.notePosition(pos, false)
	}
	n.bucketN++
	n.waitSamples++
	return nil
}

func (n *pgNode) add(name, unit string, at time.Time, v float64) {
	result.AddPoint(n.series, name, unit, n.start, at, v)
}

// record turns a reading into one point of every series, from the previous reading.
func (n *pgNode) record(c pgCounters) {
	p := n.prev
	n.prev = c
	n.presence.note(c)
	n.noteLag(c)
	n.notePosition(c.position(), true)
	if !p.at.IsZero() && p.inRecovery != c.inRecovery {
		n.roleChanges = append(n.roleChanges, roleChange{before: p.at, after: c.at, promoted: p.inRecovery})
	}
	secs := c.at.Sub(p.at).Seconds()
	if secs <= 0 {
		return
	}
	if n.bucketN > 0 {
		for _, class := range WaitClasses {
			n.add(result.PGWaitFigure(class), "sessions", c.at, float64(n.bucket[class])/float64(n.bucketN))
		}
		n.bucket, n.bucketN = map[string]int{}, 0
	}
	for _, r := range c.rates(p, secs) {
		n.add(r.name, r.unit, c.at, r.v)
	}
	for name, s := range c.standbys {
		pre := result.PGStandbyFigure(name, "")
		for fig, lag := range map[string]*float64{"write_lag_s": s.writeLag, "flush_lag_s": s.flushLag} {
			if lag != nil {
				n.add(pre+fig, "s", c.at, *lag)
			}
		}
		if lag, ok := s.lagOf(); ok {
			n.add(pre+result.PGReplayLagSeconds, "s", c.at, lag)
		}
		n.add(pre+"behind_mb", "MB", c.at, float64(s.behind)/1e6)
		if ps, ok := p.standbys[name]; ok {
			n.add(pre+"replay_mb_per_s", "MB/s", c.at, float64(sub64(s.replayLSN, ps.replayLSN))/1e6/secs)
		}
	}
}

// windowCounters are the node's figures over the whole window: rates from the first and
// last readings, mean sessions per wait class, and each standby's replay lag and its growth
// (windowLag).
func (n *pgNode) windowCounters(end time.Time) map[string]float64 {
	out := map[string]float64{
		result.PGSharedBuffersBytes: float64(n.info.SharedBuffersBytes),
		result.PGDatabaseBytes:      float64(n.info.DatabaseBytes),
	}
	if n.waitSamples > 0 {
		for _, class := range WaitClasses {
			out[result.PGWaitFigure(class)] = float64(n.classTotal[class]) / float64(n.waitSamples)
		}
	}
	f, l := n.first, n.prev
	secs := l.at.Sub(f.at).Seconds()
	if secs <= 0 {
		return out
	}
	for _, r := range l.rates(f, secs) {
		out[r.name] = r.v
	}
	out["checkpoints"] = float64(sub64(l.checkpoints, f.checkpoints))
	for name, s := range l.standbys {
		pre := result.PGStandbyFigure(name, "")
		if last, growth, grew, ok := windowLag(n.lagReads[name], end); ok {
			out[pre+result.PGReplayLagSeconds] = last.lag
			if grew {
				out[pre+result.PGReplayLagGrowth] = growth
			}
		}
		out[pre+"behind_mb"] = float64(s.behind) / 1e6
		if fs, ok := f.standbys[name]; ok {
			out[pre+"replay_mb_per_s"] = float64(sub64(s.replayLSN, fs.replayLSN)) / 1e6 / secs
		}
	}
	return out
}

func (n *pgNode) topWaits() []result.WaitEvent {
	if n.waitSamples == 0 {
		return nil
	}
	var out []result.WaitEvent
	for k, c := range n.events {
		out = append(out, result.WaitEvent{Type: k[0], Event: k[1], Class: k[2], Sessions: float64(c) / float64(n.waitSamples)})
	}
	result.SortWaitEvents(out)
	if len(out) > maxTopWaits {
		out = out[:maxTopWaits]
	}
	return out
}

func sub64(cur, prev int64) int64 {
	if cur < prev {
		return 0
	}
	return cur - prev
}
