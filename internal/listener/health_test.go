package listener

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/routing"
	"github.com/agbench/agbench/internal/status"
)

// The listener's /status names roles in the routing package's words, which render reads
// as status's: the two must not drift apart.
func TestRoleWordsAreStatusWords(t *testing.T) {
	if routing.RolePrimary.String() != status.RolePrimary || routing.RoleStandby.String() != status.RoleStandby {
		t.Fatalf("routing says %q and %q; status %q and %q", routing.RolePrimary, routing.RoleStandby, status.RolePrimary, status.RoleStandby)
	}
}

func TestLSNText(t *testing.T) {
	for _, s := range []string{"0/0", "16/B374D848", "FFFFFFFF/FFFFFFFF"} {
		v, err := parseLSN(s)
		if err != nil || cluster.FormatLSN(v) != s {
			t.Errorf("%s: %X %v -> %s", s, v, err, cluster.FormatLSN(v))
		}
	}
	for _, s := range []string{"", "0", "x/1", "1/", "100000000/0"} {
		if _, err := parseLSN(s); err == nil {
			t.Errorf("parseLSN(%q) accepted", s)
		}
	}
}

func TestLagFromPrimaryHistory(t *testing.T) {
	h := &health{noHist: "no primary's WAL position seen yet"}
	t0 := time.Unix(1000, 0)
	if lag, why := h.lagOf(100, t0); why != "no primary's WAL position seen yet" || lag != 0 {
		t.Errorf("without history: lagOf = %s, %q; want unknown", lag, why)
	}
	for i, lsn := range []uint64{100, 100, 200, 300, 300, 400} {
		h.record(t0.Add(time.Duration(i)*time.Second), lsn)
	}
	if len(h.hist) != 4 {
		t.Fatalf("history keeps the first sighting of each LSN: %v", h.hist)
	}
	now := t0.Add(10 * time.Second)
	cases := []struct {
		replay uint64
		want   time.Duration
		why    string
	}{
		{400, 0, ""},               // caught up
		{500, 0, ""},               // ahead of the last sample (the primary moved on since)
		{300, 5 * time.Second, ""}, // behind since the primary was first seen at 400 (t0+5s)
		{250, 7 * time.Second, ""}, // first sample past 250 is 300 at t0+3s
		{100, 8 * time.Second, ""}, // first sample past 100 is 200 at t0+2s
		// behind the whole history: 10 s is only a lower bound
		{0, 10 * time.Second, "behind every WAL position the primary was seen at: at least 10s"},
	}
	for _, c := range cases {
		if got, why := h.lagOf(c.replay, now); got != c.want || why != c.why {
			t.Errorf("lagOf(%d) = %s, %q; want %s, %q", c.replay, got, why, c.want, c.why)
		}
	}
}

// settleNodes sets each node's last probe (nil: never probed; up and in recovery or not,
// at an LSN) and settles roles and lag at now, as a probe round does.
func settleNodes(h *health, now time.Time, probes ...*probeResult) {
	h.mu.Lock()
	for i, r := range probes {
		n := h.nodes[i]
		switch {
		case r == nil:
			continue
		case r.lsn == 0: // a failed probe
			n.probed, n.up, n.why = true, false, "connection refused"
		default:
			n.probed, n.up, n.inRecovery, n.lsn, n.probedAt = true, true, r.inRecovery, r.lsn, now
		}
	}
	h.settle(now)
	h.mu.Unlock()
	h.publish()
}

func testHealth(names ...string) *health {
	var bs []Backend
	for _, n := range names {
		bs = append(bs, Backend{Name: n, Addr: "127.0.0.1:1"})
	}
	return newHealth(bs, time.Second, func(Event) {}, nil)
}

// lagView is each node's lag as /status, /metrics and the router see it.
type lagView struct {
	status  NodeStatus
	metric  string // the node's agbench_listener_backend_lag_seconds line, "" when absent
	routing routing.Node
}

func lagViews(h *health) map[string]lagView {
	l := &Listener{health: h, metrics: newMetrics()}
	var prom strings.Builder
	l.writeProm(&prom)
	v := map[string]lagView{}
	for i, s := range h.status() {
		lv := lagView{status: s, routing: h.routingNodes()[i]}
		for _, line := range strings.Split(prom.String(), "\n") {
			if strings.HasPrefix(line, "agbench_listener_backend_lag_seconds{node=\""+s.Name+"\"}") {
				lv.metric = line
			}
		}
		v[s.Name] = lv
	}
	return v
}

// A lag is given where it was measured only. The primary, a node down, a node
// not probed yet and a standby behind every position of the primary seen have none: no
// lag_seconds in /status (lag_unknown says why), no metric, and the router knows.
func TestLagAbsentWhereNotMeasured(t *testing.T) {
	h := testHealth("primary", "standby1", "standby2", "standby3", "standby4")
	t0 := time.Unix(1000, 0)
	settleNodes(h, t0, &probeResult{lsn: 0x300}, &probeResult{inRecovery: true, lsn: 0x300},
		&probeResult{inRecovery: true, lsn: 0x200}, &probeResult{}, nil)
	v := lagViews(h)
	for name, why := range map[string]string{
		"primary":  "not a standby (primary)",
		"standby2": "behind every WAL position the primary was seen at: at least 0s",
		"standby3": "down",
		"standby4": "not probed yet",
	} {
		if s := v[name].status; s.LagSeconds != nil || s.LagUnknown != why {
			t.Errorf("%s: lag_seconds %v, lag_unknown %q; want absent, %q", name, fmtPtr(s.LagSeconds), s.LagUnknown, why)
		}
		if v[name].metric != "" {
			t.Errorf("%s: metric %q, want none", name, v[name].metric)
		}
		if v[name].routing.LagUnknown != why {
			t.Errorf("%s: the router's LagUnknown %q, want %q", name, v[name].routing.LagUnknown, why)
		}
	}
	s1 := v["standby1"]
	if s1.status.LagSeconds == nil || *s1.status.LagSeconds != 0 || s1.status.LagUnknown != "" ||
		s1.metric != `agbench_listener_backend_lag_seconds{node="standby1"} 0` || s1.routing.LagUnknown != "" {
		t.Errorf("standby1 caught up: lag_seconds %v (%q), metric %q, router %q; want 0 measured",
			fmtPtr(s1.status.LagSeconds), s1.status.LagUnknown, s1.metric, s1.routing.LagUnknown)
	}
	b, err := json.Marshal(v["primary"].status)
	if err != nil || strings.Contains(string(b), "lag_seconds") || !strings.Contains(string(b), `"lag_unknown":"not a standby (primary)"`) {
		t.Errorf("the primary's /status JSON: %s %v", b, err)
	}
	// The primary moves on; standby2 is still behind its first position, then passes it:
	// its lag is measured from when the primary was first seen past it.
	settleNodes(h, t0.Add(time.Second), &probeResult{lsn: 0x400}, &probeResult{inRecovery: true, lsn: 0x400},
		&probeResult{inRecovery: true, lsn: 0x200}, &probeResult{}, nil)
	if s2 := lagViews(h)["standby2"]; s2.status.LagSeconds != nil || s2.status.LagUnknown != "behind every WAL position the primary was seen at: at least 1s" {
		t.Errorf("standby2 still behind 0/300: lag_seconds %v (%q)", fmtPtr(s2.status.LagSeconds), s2.status.LagUnknown)
	}
	settleNodes(h, t0.Add(3*time.Second), &probeResult{lsn: 0x500}, &probeResult{inRecovery: true, lsn: 0x500},
		&probeResult{inRecovery: true, lsn: 0x300}, &probeResult{}, nil)
	s2 := lagViews(h)["standby2"]
	if s2.status.LagSeconds == nil || *s2.status.LagSeconds != 2 || s2.metric != `agbench_listener_backend_lag_seconds{node="standby2"} 2` {
		t.Errorf("standby2 behind 0/400 since it was seen: lag_seconds %v (%q), metric %q; want 2",
			fmtPtr(s2.status.LagSeconds), s2.status.LagUnknown, s2.metric)
	}
}

// With no position of a primary seen (none up since the start, or none since the
// last one stopped being the primary), a standby's lag is unknown, not 0.
func TestLagUnknownWithoutPrimaryHistory(t *testing.T) {
	h := testHealth("primary", "standby1")
	t0 := time.Unix(1000, 0)
	settleNodes(h, t0, &probeResult{}, &probeResult{inRecovery: true, lsn: 0x300})
	if s := lagViews(h)["standby1"]; s.status.LagSeconds != nil || s.status.LagUnknown != "no primary's WAL position seen yet" || s.metric != "" {
		t.Errorf("no primary seen yet: lag_seconds %v (%q), metric %q", fmtPtr(s.status.LagSeconds), s.status.LagUnknown, s.metric)
	}
	settleNodes(h, t0.Add(time.Second), &probeResult{lsn: 0x300}, &probeResult{inRecovery: true, lsn: 0x300})
	if s := lagViews(h)["standby1"]; s.status.LagSeconds == nil || *s.status.LagSeconds != 0 {
		t.Errorf("with a primary: lag_seconds %v (%q), want 0", fmtPtr(s.status.LagSeconds), s.status.LagUnknown)
	}
	// The primary is demoted and no node is promoted (yet): the old history is dropped.
	settleNodes(h, t0.Add(2*time.Second), &probeResult{inRecovery: true, lsn: 0x400}, &probeResult{inRecovery: true, lsn: 0x300})
	want := "no primary's WAL position seen since primary stopped being the primary"
	for name, s := range lagViews(h) {
		if s.status.LagSeconds != nil || s.status.LagUnknown != want || s.metric != "" {
			t.Errorf("%s after the demotion: lag_seconds %v (%q), metric %q; want %q", name, fmtPtr(s.status.LagSeconds), s.status.LagUnknown, s.metric, want)
		}
	}
}

// lagOver is true when the node's lag was measured and is over limit seconds.
func lagOver(s NodeStatus, limit float64) bool { return s.LagSeconds != nil && *s.LagSeconds > limit }

func fmtPtr(p *float64) string {
	if p == nil {
		return "absent"
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}

// A login refused by a server that refuses TLS (pgx's sslmode=prefer tries TLS first) is said
// as the server said it, not as the refused TLS attempt.
func TestRootCauseNamesARefusedLogin(t *testing.T) {
	t.Parallel()
	topo := clustertest.Shared(t, clustertest.Options{})
	cs := strings.Replace(clustertest.OrdinaryConnString(topo, topo.Primary()), "sslmode=disable", "sslmode=prefer", 1)
	_, err := pgconn.Connect(context.Background(), strings.Replace(cs, clustertest.OrdinaryPassword, "wrong", 1))
	if got := rootCause(err); !strings.Contains(got, "password authentication failed") || !strings.Contains(got, "28P01") {
		t.Fatalf("rootCause = %q (from %v)", got, err)
	}
}

func TestRootCauseIsShort(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := pgconn.Connect(ctx, "host=127.0.0.1 port=1 user=x sslmode=disable connect_timeout=5")
	if err == nil {
		t.Skip("something listens on port 1")
	}
	if got := rootCause(err); got != "connection refused" || strings.Contains(got, "dial") {
		t.Fatalf("rootCause = %q (from %v)", got, err)
	}
}
