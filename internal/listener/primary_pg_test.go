package listener

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// TestFreshListenerFacesTwoWritableNodes is a split brain: the standby is
// promoted (pg_promote) while the old primary is down, and the old primary is started
// again without standby.signal, writable on the old timeline. A listener started then,
// probing as an ordinary login, sends writes to the promoted node (the newer timeline),
// counts the conflict, and shows one primary; a down node is shown down, and the stale
// primary does not take its place. A login that may not call pg_walfile_name leaves the
// listener unable to tell the two apart: it says so and refuses writes.
func TestFreshListenerFacesTwoWritableNodes(t *testing.T) {
	t.Parallel() // owns its cluster: it stops the primary and promotes the standby
	topo := clustertest.New(t, clustertest.Options{Standbys: 1})
	ctx := context.Background()
	e := &pgEnv{t: t, topo: topo}
	e.exec("primary", "CREATE ROLE app LOGIN PASSWORD 'app-secret'")
	topoWait(t, topo)
	if err := topo.StopNode(ctx, "primary"); err != nil {
		t.Fatal(err)
	}
	e.exec("standby1", "SELECT pg_promote(true, 60)")
	if err := topo.StartNode(ctx, "primary"); err != nil { // no standby.signal: writable, timeline 1
		t.Fatal(err)
	}

	start := func(t *testing.T) *Listener {
		cfg := Config{Routing: true, Listen: "127.0.0.1:0", Metrics: "127.0.0.1:0", ProbeInterval: 200 * time.Millisecond}
		for _, b := range ConfigFromTopology(topo).Backends {
			n := topo.Node(b.Name)
			b.ProbeConnString = fmt.Sprintf("host=%s port=%d user=app password=app-secret dbname=%s sslmode=disable", n.Host, n.Port, topo.Database)
			cfg.Backends = append(cfg.Backends, b)
		}
		l, err := Start(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l
	}
	e.l = start(t)
	if n, rec := e.where(e.l.Addr().String(), ""); n != "standby1" || rec {
		t.Fatalf("writes from a fresh listener went to %s (in recovery %v), want standby1", n, rec)
	}
	// A round or more on, the old primary is also older than the last primary: the reason
	// stated must not change with it.
	seen := e.status("primary").ProbedAt
	waitFor(t, "two more probes of primary", func() bool { return e.status("primary").ProbedAt.After(seen.Add(e.l.cfg.ProbeInterval)) })
	newest, stale := e.status("standby1"), e.status("primary")
	if newest.Role != "primary" || newest.Timeline == nil || *newest.Timeline != 2 || newest.TimelineError != "" {
		t.Errorf("standby1: %+v", newest)
	}
	if stale.Role != "stale-primary" || stale.Timeline == nil || *stale.Timeline != 1 ||
		!strings.Contains(stale.Conflict, "standby1 is the primary: newest timeline (primary 1, standby1 2)") {
		t.Errorf("primary: %+v", stale)
	}
	t.Logf("the stale primary as an unprivileged probe login sees it: %s", stale.Conflict)
	if c := e.l.Counts().Conflicts; c["primary"] != 1 {
		t.Errorf("conflicts %v", c)
	}
	var st struct{ Primary string }
	if err := json.Unmarshal([]byte(httpGet(t, "http://"+e.l.MetricsAddr().String()+"/status")), &st); err != nil || st.Primary != "standby1" {
		t.Errorf("/status primary %q, %v", st.Primary, err)
	}
	body := httpGet(t, "http://"+e.l.MetricsAddr().String()+"/metrics")
	for _, want := range []string{
		`agbench_listener_primary_conflicts_total{node="primary"} 1`,
		`agbench_listener_backend_primary{node="primary"} 0`,
		`agbench_listener_backend_primary{node="standby1"} 1`,
		`agbench_listener_backend_stale_primary{node="primary"} 1`,
		`agbench_listener_backend_timeline{node="primary"} 1`,
		`agbench_listener_backend_timeline{node="standby1"} 2`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}

	t.Run("timeline not readable", func(t *testing.T) {
		for _, n := range []string{"primary", "standby1"} {
			e.exec(n, "REVOKE EXECUTE ON FUNCTION pg_walfile_name(pg_lsn) FROM PUBLIC")
			defer e.exec(n, "GRANT EXECUTE ON FUNCTION pg_walfile_name(pg_lsn) TO PUBLIC")
		}
		l := start(t)
		for _, s := range l.Status() {
			if s.Role != "stale-primary" || s.Timeline != nil || !strings.Contains(s.TimelineError, "permission denied for function pg_walfile_name (42501)") ||
				!strings.Contains(s.Conflict, "cannot tell which is newest") {
				t.Errorf("%s: %+v", s.Name, s)
			}
		}
		_, err := e.connect(l.Addr().String(), "")
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != codeRejected {
			t.Errorf("writes with two writable nodes and no timelines: %v, want a refusal", err)
		}
	})

	if err := topo.StopNode(ctx, "standby1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "standby1 down", func() bool { return !e.status("standby1").Up })
	if s := e.status("standby1"); s.Role != "down" {
		t.Errorf("the down primary's role is %q, want down", s.Role)
	}
	// Older by its timeline, or, had this listener's probe met the REVOKE above, because it
	// was found older before.
	if s := e.status("primary"); s.Role != "stale-primary" || !strings.Contains(s.Conflict, "older than the last primary") {
		t.Errorf("with the newest primary down the old one is %+v", s)
	}
	_, err := e.connect(e.l.Addr().String(), "")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != codeRejected {
		t.Errorf("writes with the newest primary down: %v, want a refusal", err)
	}
}
