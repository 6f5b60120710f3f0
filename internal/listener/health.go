package listener

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/routing"
	"github.com/agbench/agbench/internal/status"
)

// probeSQL asks a node its role, how far its WAL goes (written on a primary, replayed on
// a standby), whether replay is paused, and, out of recovery, the name of its current WAL
// file, whose first 8 hex digits are the timeline it writes on. pg_walfile_name names the
// file by the WAL insertion timeline, the new one from the moment a promotion ends
// (pg_control_checkpoint's timeline_id waits for the end-of-recovery checkpoint); any
// login may call it unless EXECUTE was revoked (then probeSQLNoTimeline is used).
const probeSQL = `SELECT pg_is_in_recovery(),
  CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END,
  CASE WHEN pg_is_in_recovery() THEN pg_is_wal_replay_paused() ELSE false END,
  CASE WHEN pg_is_in_recovery() THEN NULL ELSE pg_walfile_name(pg_current_wal_lsn()) END`

// probeSQLNoTimeline is probeSQL without the timeline, for a login that may not read it.
const probeSQLNoTimeline = `SELECT pg_is_in_recovery(),
  CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END,
  CASE WHEN pg_is_in_recovery() THEN pg_is_wal_replay_paused() ELSE false END`

// timelineRetryProbes is how many probes go without the timeline, once the probe login
// was refused it, before the probe asks for it again.
const timelineRetryProbes = 30

// maxLSNHistory bounds the primary's LSN history kept to compute standby lag.
const maxLSNHistory = 8192

// NodeStatus is what the listener last learned of one backend (status.ListenerNode).
type NodeStatus = status.ListenerNode

type nodeState struct {
	b          Backend
	conn       *pgconn.PgConn
	probed     bool
	up         bool
	fails      int
	why        string
	inRecovery bool
	paused     bool
	lsn        uint64
	probedAt   time.Time
	promotedAt time.Time
	role       routing.Role
	// lag is the standby's lag; when lagUnknown is set, it was not measured (lag is then
	// a lower bound, 0 when none is known) and lagUnknown says why.
	lag        time.Duration
	lagUnknown string
	// timeline is the writable node's timeline (0: not read; timelineErr says why).
	timeline    uint32
	timelineErr string
	// tlDenied, used by the probe goroutine only, is set once the login may not read the
	// timeline; the probe then asks probeSQLNoTimeline, and asks again with the timeline
	// every timelineRetryProbes probes (tlSkipped counts them), in case of a GRANT.
	tlDenied  string
	tlSkipped int
	// stale is set while the node is writable and not the primary; conflict says why.
	stale    bool
	conflict string
	// olderThan names the primary this node was found older than, until it is seen in
	// recovery (see newestPrimary).
	olderThan string
	// refusing keeps the node out of routing from refusedAt until a probe started later
	// succeeds: it refused a session during startup.
	refusing  string
	refusedAt time.Time
}

// probeResult is what one probe learned.
type probeResult struct {
	inRecovery, paused bool
	lsn                uint64
	timeline           uint32
	timelineErr        string
}

type lsnSample struct {
	at  time.Time
	lsn uint64
}

// health probes the backends and keeps the view the router reads.
type health struct {
	interval time.Duration
	timeout  time.Duration
	nodes    []*nodeState
	// onRoleLost is called with each node that stopped being the primary or a standby,
	// after the new roles are published.
	onRoleLost func(roleLoss)
	// observe, when set, is given each good probe's WAL position (causal routing).
	observe func(node string, r lsnReading)
	emit    func(Event)

	mu          sync.Mutex // guards nodes' fields, lastPrimary, hist, noHist, conflicts
	lastPrimary string
	hist        []lsnSample
	// noHist says why hist is empty: no primary seen since start, or since the last one
	// stopped being the primary.
	noHist string
	lost   []roleLoss // nodes that stopped being primary or a standby in this round
	// conflicts counts, by node, the times it was found writable while not the primary.
	conflicts map[string]uint64
	// floor is the newest timeline a primary was seen on (0: none read).
	floor uint32

	view atomic.Pointer[[]routing.Node]
}

// roleLoss is a node that stopped being the primary or a standby: the sessions routed to it
// in that role are ended.
type roleLoss struct {
	node string
	was  routing.Role // RolePrimary or RoleStandby
	now  string       // its role now, or the new primary's name for a demoted primary
}

func newHealth(backends []Backend, interval time.Duration, emit func(Event), onRoleLost func(roleLoss)) *health {
	h := &health{interval: interval, timeout: max(5*time.Second, 2*interval), emit: emit, onRoleLost: onRoleLost,
		conflicts: map[string]uint64{}, noHist: "no primary's WAL position seen yet"}
	for _, b := range backends {
		h.nodes = append(h.nodes, &nodeState{b: b, role: routing.RoleUnknown, why: "not probed yet", lagUnknown: lagNotProbed})
	}
	h.publish()
	return h
}

// nodes returns the router's view: lock-free, updated after each probe round.
func (h *health) routingNodes() []routing.Node { return *h.view.Load() }

// run probes every interval until ctx ends, then closes the probe connections.
func (h *health) run(ctx context.Context) {
	defer h.closeConns()
	t := time.NewTicker(h.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			h.round(ctx)
		}
	}
}

// round probes all backends at once and then settles roles and lag.
func (h *health) round(ctx context.Context) {
	type result struct {
		probeResult
		err       error
		start, at time.Time
	}
	res := make([]result, len(h.nodes))
	var wg sync.WaitGroup
	for i, n := range h.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &res[i]
			r.start = time.Now()
			r.probeResult, r.err = h.probe(ctx, n)
			r.at = time.Now()
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return
	}
	h.mu.Lock()
	var events []Event
	for i, n := range h.nodes {
		r := res[i]
		wasUp, wasRecovery, first := n.up, n.inRecovery, !n.probed
		n.probed = true
		if r.err != nil {
			n.fails++
			n.why = rootCause(r.err)
			if n.fails >= probeFailuresDown || !wasUp {
				n.up = false
			}
			if wasUp && !n.up {
				events = append(events, Event{Kind: "down", Node: n.b.Name, Msg: n.why})
			}
			if first {
				events = append(events, Event{Kind: "down", Node: n.b.Name, Msg: n.why})
			}
			continue
		}
		n.fails, n.why, n.up, n.probedAt = 0, "", true, r.at
		if h.observe != nil && r.lsn != 0 {
			h.observe(n.b.Name, lsnReading{lsn: r.lsn, insert: r.lsn, inRecovery: r.inRecovery, at: r.start})
		}
		n.inRecovery, n.paused, n.lsn = r.inRecovery, r.paused, r.lsn
		n.timeline, n.timelineErr = r.timeline, r.timelineErr
		if n.refusing != "" && r.start.After(n.refusedAt) {
			n.refusing = ""
		}
		if !r.inRecovery && wasRecovery && !first {
			n.promotedAt = r.at
		}
		if !wasUp {
			events = append(events, Event{Kind: "up", Node: n.b.Name, Msg: "in recovery: " + strconv.FormatBool(r.inRecovery)})
		}
	}
	events = append(events, h.settle(time.Now())...)
	lost := h.lost
	h.lost = nil
	h.mu.Unlock()
	h.publish()
	for _, e := range events {
		h.emit(e)
	}
	for _, r := range lost { // outside the lock: the callback may read the status
		if h.onRoleLost != nil {
			h.onRoleLost(r)
		}
	}
}

// probe runs probeSQL on the node's probe connection, connecting first when needed.
func (h *health) probe(ctx context.Context, n *nodeState) (probeResult, error) {
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	if n.b.PatroniURL != "" {
		return probePatroni(ctx, n.b.PatroniURL)
	}
	if n.conn == nil || n.conn.IsClosed() {
		var err error
		n.conn, err = pgconn.Connect(ctx, n.b.ProbeConnString)
		if err != nil {
			n.conn = nil
			return probeResult{}, err
		}
	}
	var r probeResult
	row, err := h.probeRow(ctx, n)
	if err == nil {
		r, err = parseProbeRow(row)
	}
	if err != nil {
		_ = n.conn.Close(context.Background())
		n.conn = nil
		return probeResult{}, err
	}
	if n.tlDenied != "" && !r.inRecovery {
		r.timelineErr = n.tlDenied
	}
	return r, nil
}

// probeRow runs the probe query and returns its one row. When the login may not call
// pg_walfile_name, it asks without the timeline, and for it again every
// timelineRetryProbes probes.
func (h *health) probeRow(ctx context.Context, n *nodeState) ([][]byte, error) {
	sql := probeSQL
	if n.tlDenied != "" {
		if n.tlSkipped++; n.tlSkipped < timelineRetryProbes {
			sql = probeSQLNoTimeline
		} else {
			n.tlSkipped = 0
		}
	}
	rs, err := n.conn.Exec(ctx, sql).ReadAll()
	var pe *pgconn.PgError
	if sql == probeSQL && errors.As(err, &pe) && (pe.Code == codeInsufficientPrivilege || pe.Code == codeUndefinedFunction) {
		n.tlDenied = "the probe login may not read it: " + pe.Message + " (" + pe.Code + ")"
		rs, err = n.conn.Exec(ctx, probeSQLNoTimeline).ReadAll()
	} else if sql == probeSQL && err == nil {
		n.tlDenied, n.tlSkipped = "", 0
	}
	if err != nil {
		return nil, err
	}
	if len(rs) != 1 || len(rs[0].Rows) != 1 || len(rs[0].Rows[0]) < 3 {
		return nil, fmt.Errorf("health probe: unexpected result shape")
	}
	return rs[0].Rows[0], nil
}

// parseProbeRow reads a row of probeSQL (or probeSQLNoTimeline, without the fourth column).
func parseProbeRow(row [][]byte) (probeResult, error) {
	var r probeResult
	r.inRecovery = string(row[0]) == "t"
	r.paused = string(row[2]) == "t"
	if row[1] != nil {
		lsn, err := parseLSN(string(row[1]))
		if err != nil {
			return r, err
		}
		r.lsn = lsn
	}
	if len(row) > 3 && row[3] != nil {
		tli, err := timelineOfWALFile(string(row[3]))
		if err != nil {
			return r, err
		}
		r.timeline = tli
	}
	return r, nil
}

// timelineOfWALFile reads the timeline from a WAL file name: its first 8 hex digits
// ("000000020000000000000003" is on timeline 2).
func timelineOfWALFile(name string) (uint32, error) {
	if len(name) != 24 {
		return 0, fmt.Errorf("health probe: bad WAL file name %q", name)
	}
	v, err := strconv.ParseUint(name[:8], 16, 32)
	if err != nil || v == 0 {
		return 0, fmt.Errorf("health probe: bad WAL file name %q", name)
	}
	return uint32(v), nil
}

// settle decides the primary and each node's role and lag after a probe round. With two
// nodes out of recovery (a promotion while the old primary still runs, or the old primary
// restarted without standby.signal), newestPrimary picks the primary; the others are
// stale primaries that take no session, each counted and reported once as a conflict.
func (h *health) settle(now time.Time) []Event {
	var events []Event
	var cands []writable
	var candNodes []*nodeState
	for _, n := range h.nodes {
		if n.up && n.inRecovery {
			n.olderThan = ""
		}
		if n.up && !n.inRecovery {
			cands = append(cands, writable{name: n.b.Name, timeline: n.timeline, promotedAt: n.promotedAt, olderThan: n.olderThan})
			candNodes = append(candNodes, n)
		}
	}
	win, rule := newestPrimary(cands, h.floor, h.lastPrimary)
	var primary *nodeState
	if win >= 0 {
		primary = candNodes[win]
		h.floor = max(h.floor, primary.timeline)
	}
	for _, n := range h.nodes {
		old, wasStale := n.role, n.stale
		n.stale, n.conflict = false, ""
		switch {
		case !n.up:
			// keep the last role seen; Up=false keeps the node out of routing
		case n == primary:
			n.role = routing.RolePrimary
			if rule != "" {
				n.conflict = "the newest of " + strconv.Itoa(len(cands)) + " writable nodes: " + rule
			}
		case !n.inRecovery:
			n.role, n.stale = routing.RoleStalePrimary, true
			n.conflict = "writable, but " + staleBecause(primary, rule) + "; takes no sessions"
			if primary != nil {
				n.olderThan = primary.b.Name
			}
		default:
			n.role = routing.RoleStandby
		}
		promoted := n.up && old == routing.RoleStandby && n.role != routing.RoleStandby
		if promoted {
			// The read-intent sessions routed to it as a standby would go on reading (and
			// could write) on a writable node; they are ended, as SQL Server's listener
			// drops every connection at a failover, so that their clients are routed again.
			h.lost = append(h.lost, roleLoss{node: n.b.Name, was: routing.RoleStandby, now: n.role.String()})
		}
		switch {
		case n.stale && !wasStale:
			h.conflicts[n.b.Name]++
			events = append(events, Event{Kind: "conflict", Node: n.b.Name, Msg: n.conflict})
		case promoted:
			events = append(events, Event{Kind: "role", Node: n.b.Name, Msg: n.role.String() + " (no longer a standby); ending the read-intent sessions routed to it as a standby"})
		case n.role != old && n.up:
			events = append(events, Event{Kind: "role", Node: n.b.Name, Msg: n.role.String()})
		}
	}
	cur := ""
	if primary != nil {
		cur = primary.b.Name
	}
	if h.lastPrimary != "" && cur != h.lastPrimary {
		last := h.node(h.lastPrimary)
		if cur != "" || (last.up && last.inRecovery) {
			events = append(events, Event{Kind: "role", Node: h.lastPrimary, Msg: "no longer the primary (now: " + orNone(cur) + "); ending its sessions"})
			h.lost = append(h.lost, roleLoss{node: h.lastPrimary, was: routing.RolePrimary, now: orNone(cur)})
			h.noHist = "no primary's WAL position seen since " + h.lastPrimary + " stopped being the primary"
			h.lastPrimary = ""
			h.hist = nil
		}
	}
	if cur != "" {
		h.lastPrimary = cur
		h.record(primary.probedAt, primary.lsn)
	}
	for _, n := range h.nodes {
		n.lag, n.lagUnknown = h.nodeLag(n, now)
	}
	return events
}

// staleBecause says why a writable node is not the primary.
func staleBecause(primary *nodeState, rule string) string {
	if primary == nil {
		return "not the newest primary: " + rule
	}
	return primary.b.Name + " is the primary: " + rule
}

// refuse takes a node out of routing until a probe that starts after now succeeds: it
// refused a session during startup, for the reason why.
func (h *health) refuse(name, why string) {
	h.mu.Lock()
	if n := h.node(name); n != nil {
		n.refusing, n.refusedAt = why, time.Now()
	}
	h.mu.Unlock()
	h.publish()
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func (h *health) node(name string) *nodeState {
	for _, n := range h.nodes {
		if n.b.Name == name {
			return n
		}
	}
	return nil
}

// record keeps the first time the primary was seen at each new LSN.
func (h *health) record(at time.Time, lsn uint64) {
	if len(h.hist) > 0 && lsn <= h.hist[len(h.hist)-1].lsn {
		return
	}
	if len(h.hist) >= maxLSNHistory {
		h.hist = append(h.hist[:0], h.hist[len(h.hist)/2:]...)
	}
	h.hist = append(h.hist, lsnSample{at, lsn})
}

// Why a node's lag is unknown, beyond those lagOf gives.
const (
	lagNotProbed = "not probed yet"
	lagDown      = "down"
)

// nodeLag is a node's lag, or why it is unknown: only a standby that answers probes has
// one (see lagOf).
func (h *health) nodeLag(n *nodeState, now time.Time) (time.Duration, string) {
	switch {
	case !n.probed:
		return 0, lagNotProbed
	case !n.up:
		return 0, lagDown
	case n.role != routing.RoleStandby:
		return 0, "not a standby (" + n.role.String() + ")"
	}
	return h.lagOf(n.lsn, now)
}

// lagOf is how long a standby that replayed up to lsn has been behind: the time since
// the primary was first seen past lsn (0 when it has not been), exact to one probe
// interval. It is unknown, and why says so, when no position of the primary has been
// seen (h.noHist), or when lsn is behind all of them (the history began after the
// standby's position): lag is then only a lower bound.
func (h *health) lagOf(lsn uint64, now time.Time) (lag time.Duration, why string) {
	if len(h.hist) == 0 {
		return 0, h.noHist
	}
	i := sort.Search(len(h.hist), func(i int) bool { return h.hist[i].lsn > lsn })
	if i == len(h.hist) {
		return 0, ""
	}
	lag = max(0, now.Sub(h.hist[i].at))
	if i == 0 {
		return lag, "behind every WAL position the primary was seen at: at least " + lag.Round(time.Millisecond).String()
	}
	return lag, ""
}

// publish stores the nodes' state as the routing view. It stores under the lock: a view
// built before a probe round's and stored after it (a refusal's, concurrent with the round)
// would show the old roles again, and a session routed by them would pass roleHolds.
func (h *health) publish() {
	h.mu.Lock()
	defer h.mu.Unlock()
	v := make([]routing.Node, len(h.nodes))
	for i, n := range h.nodes {
		v[i] = routing.Node{Name: n.b.Name, Up: n.up, Role: n.role, Lag: n.lag, LagUnknown: n.lagUnknown, Why: n.why, Refusing: n.refusing}
	}
	h.view.Store(&v)
}

// status returns every node's state, in configuration order.
func (h *health) status() []NodeStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := make([]NodeStatus, len(h.nodes))
	for i, n := range h.nodes {
		s[i] = NodeStatus{Name: n.b.Name, Addr: n.b.Addr, Up: n.up, Role: n.role.String(),
			LagUnknown: n.lagUnknown, ReplayPaused: n.paused, Error: n.why, ProbedAt: n.probedAt,
			Conflict: n.conflict, Refusing: n.refusing}
		if n.lagUnknown == "" {
			lag := n.lag.Seconds()
			s[i].LagSeconds = &lag
		}
		switch {
		case n.up:
			s[i].LSN = cluster.FormatLSN(n.lsn)
		case n.probed:
			s[i].Role = "down"
		}
		if n.up && !n.inRecovery {
			if n.timeline != 0 {
				tli := n.timeline
				s[i].Timeline = &tli
			}
			s[i].TimelineError = n.timelineErr
		}
	}
	return s
}

// conflictCounts returns, by node, how often it was found a stale primary.
func (h *health) conflictCounts() map[string]uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := make(map[string]uint64, len(h.conflicts))
	for k, v := range h.conflicts {
		c[k] = v
	}
	return c
}

func (h *health) closeConns() {
	for _, n := range h.nodes {
		if n.conn != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = n.conn.Close(ctx)
			cancel()
			n.conn = nil
		}
	}
}

// parseLSN reads PostgreSQL's pg_lsn text form, "16/B374D848".
func parseLSN(s string) (uint64, error) {
	v, err := cluster.ParseLSN(s)
	if err != nil {
		return 0, fmt.Errorf("health probe: %w", err)
	}
	return v, nil
}

// rootCause is the innermost error's message ("connection refused", "password
// authentication failed for user ..."), short enough for status lines and refusals. The
// server's own error wins; of several attempts (pgx tries TLS, then without, for
// sslmode=prefer), the last: "server refused TLS connection" hid a refused login.
func rootCause(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message + " (SQLSTATE " + pe.Code + ")"
	}
	for {
		var next error
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			next = u.Unwrap()
		case interface{ Unwrap() []error }:
			if es := u.Unwrap(); len(es) > 0 {
				next = es[len(es)-1]
			}
		}
		if next == nil {
			return err.Error()
		}
		err = next
	}
}
