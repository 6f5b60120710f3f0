package listener

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/internal/routing"
)

// probeSQL asks a node its role, how far its WAL goes (written on a primary, replayed on
// a standby) and whether replay is paused.
const probeSQL = `SELECT pg_is_in_recovery(),
  CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END,
  CASE WHEN pg_is_in_recovery() THEN pg_is_wal_replay_paused() ELSE false END`

// maxLSNHistory bounds the primary's LSN history kept to compute standby lag.
const maxLSNHistory = 8192

// NodeStatus is what the listener last learned of one backend.
type NodeStatus struct {
	Name string `json:"name"`
	Addr string `json:"addr"`
	Up   bool   `json:"up"`
	// Role is primary, standby, or unknown (never probed, or a stale second primary).
	Role string `json:"role"`
	// LSN is the WAL position written (primary) or replayed (standby).
	LSN string `json:"lsn,omitempty"`
	// LagSeconds is how long the standby's replay has been behind the primary.
	LagSeconds float64 `json:"lag_seconds"`
	// ReplayPaused is true when pg_wal_replay_pause() is in effect.
	ReplayPaused bool      `json:"replay_paused,omitempty"`
	Error        string    `json:"error,omitempty"`
	ProbedAt     time.Time `json:"probed_at"`
}

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
	lag        time.Duration
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
	// onDemote is called with a node that stopped being the primary.
	onDemote func(node string)
	emit     func(Event)

	mu          sync.Mutex // guards nodes' fields, lastPrimary, hist
	lastPrimary string
	hist        []lsnSample
	demoted     []string // nodes that stopped being primary in this round

	view atomic.Pointer[[]routing.Node]
}

func newHealth(backends []Backend, interval time.Duration, emit func(Event), onDemote func(string)) *health {
	h := &health{interval: interval, timeout: max(5*time.Second, 2*interval), emit: emit, onDemote: onDemote}
	for _, b := range backends {
		h.nodes = append(h.nodes, &nodeState{b: b, role: routing.RoleUnknown, why: "not probed yet"})
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
		inRecovery, paused bool
		lsn                uint64
		err                error
		at                 time.Time
	}
	res := make([]result, len(h.nodes))
	var wg sync.WaitGroup
	for i, n := range h.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &res[i]
			r.inRecovery, r.lsn, r.paused, r.err = h.probe(ctx, n)
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
		n.inRecovery, n.paused, n.lsn = r.inRecovery, r.paused, r.lsn
		if !r.inRecovery && wasRecovery && !first {
			n.promotedAt = r.at
		}
		if !wasUp {
			events = append(events, Event{Kind: "up", Node: n.b.Name, Msg: "in recovery: " + strconv.FormatBool(r.inRecovery)})
		}
	}
	events = append(events, h.settle(time.Now())...)
	demoted := h.demoted
	h.demoted = nil
	h.mu.Unlock()
	h.publish()
	for _, e := range events {
		h.emit(e)
	}
	for _, n := range demoted { // outside the lock: the callback may read the status
		if h.onDemote != nil {
			h.onDemote(n)
		}
	}
}

// probe runs probeSQL on the node's probe connection, connecting first when needed.
func (h *health) probe(ctx context.Context, n *nodeState) (inRecovery bool, lsn uint64, paused bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	if n.conn == nil || n.conn.IsClosed() {
		n.conn, err = pgconn.Connect(ctx, n.b.ProbeConnString)
		if err != nil {
			n.conn = nil
			return false, 0, false, err
		}
	}
	rs, err := n.conn.Exec(ctx, probeSQL).ReadAll()
	if err == nil && (len(rs) != 1 || len(rs[0].Rows) != 1 || len(rs[0].Rows[0]) != 3) {
		err = fmt.Errorf("health probe: unexpected result shape")
	}
	if err != nil {
		_ = n.conn.Close(context.Background())
		n.conn = nil
		return false, 0, false, err
	}
	row := rs[0].Rows[0]
	inRecovery = string(row[0]) == "t"
	paused = string(row[2]) == "t"
	if row[1] != nil {
		if lsn, err = parseLSN(string(row[1])); err != nil {
			return false, 0, false, err
		}
	}
	return inRecovery, lsn, paused, nil
}

// settle decides the primary and each node's role and lag after a probe round. With two
// nodes out of recovery (a promotion while the old primary still runs), the one promoted
// last is the primary and the other is a stale primary that takes no session.
func (h *health) settle(now time.Time) []Event {
	var events []Event
	var cands []*nodeState
	for _, n := range h.nodes {
		if n.up && !n.inRecovery {
			cands = append(cands, n)
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if !cands[i].promotedAt.Equal(cands[j].promotedAt) {
			return cands[i].promotedAt.After(cands[j].promotedAt)
		}
		return cands[i].b.Name == h.lastPrimary && cands[j].b.Name != h.lastPrimary
	})
	var primary *nodeState
	if len(cands) > 0 {
		primary = cands[0]
	}
	for _, n := range h.nodes {
		old := n.role
		switch {
		case !n.up:
			// keep the last role seen; Up=false keeps the node out of routing
		case n == primary:
			n.role = routing.RolePrimary
		case !n.inRecovery:
			n.role = routing.RoleUnknown
		default:
			n.role = routing.RoleStandby
		}
		if n.role != old && n.up {
			msg := n.role.String()
			if n.role == routing.RoleUnknown && !n.inRecovery {
				msg = "stale primary (another node was promoted later); takes no sessions"
			}
			events = append(events, Event{Kind: "role", Node: n.b.Name, Msg: msg})
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
			h.demoted = append(h.demoted, h.lastPrimary)
			h.lastPrimary = ""
			h.hist = nil
		}
	}
	if cur != "" {
		h.lastPrimary = cur
		h.record(primary.probedAt, primary.lsn)
	}
	for _, n := range h.nodes {
		n.lag = 0
		if n.up && n.role == routing.RoleStandby {
			n.lag = h.lagOf(n.lsn, now)
		}
	}
	return events
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

// lagOf is how long a standby that replayed up to lsn has been behind: the time since
// the primary was first seen past lsn (0 when it has not been). It is a lower bound,
// exact to one probe interval.
func (h *health) lagOf(lsn uint64, now time.Time) time.Duration {
	i := sort.Search(len(h.hist), func(i int) bool { return h.hist[i].lsn > lsn })
	if i == len(h.hist) {
		return 0
	}
	return max(0, now.Sub(h.hist[i].at))
}

func (h *health) publish() {
	h.mu.Lock()
	v := make([]routing.Node, len(h.nodes))
	for i, n := range h.nodes {
		v[i] = routing.Node{Name: n.b.Name, Up: n.up, Role: n.role, Lag: n.lag, Why: n.why}
	}
	h.mu.Unlock()
	h.view.Store(&v)
}

// status returns every node's state, in configuration order.
func (h *health) status() []NodeStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := make([]NodeStatus, len(h.nodes))
	for i, n := range h.nodes {
		s[i] = NodeStatus{Name: n.b.Name, Addr: n.b.Addr, Up: n.up, Role: n.role.String(),
			LagSeconds: n.lag.Seconds(), ReplayPaused: n.paused, Error: n.why, ProbedAt: n.probedAt}
		if n.up {
			s[i].LSN = formatLSN(n.lsn)
		}
	}
	return s
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
	hi, lo, ok := strings.Cut(s, "/")
	if ok {
		h, err1 := strconv.ParseUint(hi, 16, 32)
		l, err2 := strconv.ParseUint(lo, 16, 32)
		if err1 == nil && err2 == nil {
			return h<<32 | l, nil
		}
	}
	return 0, fmt.Errorf("health probe: bad LSN %q", s)
}

func formatLSN(v uint64) string { return fmt.Sprintf("%X/%X", v>>32, uint32(v)) }

// rootCause is the innermost error's message ("connection refused", "password
// authentication failed for user ..."), short enough for status lines and refusals.
func rootCause(err error) string {
	for {
		var next error
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			next = u.Unwrap()
		case interface{ Unwrap() []error }:
			if es := u.Unwrap(); len(es) > 0 {
				next = es[0]
			}
		}
		if next == nil {
			return err.Error()
		}
		err = next
	}
}
