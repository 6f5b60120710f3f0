package listener

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/routing"
)

// The probe measures a standby's lag from positions any login may read (the
// primary's pg_current_wal_lsn() over time, the standby's pg_last_wal_replay_lsn()), so
// --max-lag works when the probe logs in as an ordinary login without pg_monitor.
func TestMaxLagWithAnUnprivilegedProbe(t *testing.T) {
	t.Parallel() // owns its cluster: it pauses the standby's replay
	h := clustertest.NewHandmade(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var backends []Backend
	for i, name := range []string{"node0", "node1"} {
		backends = append(backends, Backend{Name: name, Addr: fmt.Sprintf("127.0.0.1:%d", h.Ports[i]), ProbeConnString: h.ConnString(i, clustertest.HandmadeApp)})
	}
	l, err := Start(ctx, Config{Listen: "127.0.0.1:0", Backends: backends, Routing: true, RoutingList: "('node1','node0')",
		MaxLag: time.Second, ProbeInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	prim, stby := h.Admin(ctx, t, 0), h.Admin(ctx, t, 1)
	defer prim.Close(context.Background())
	defer stby.Close(context.Background())
	waitFor(t, "node1 readable", func() bool { n, _, err := l.Route(routing.ReadOnly); return err == nil && n == "node1" })
	if _, err := stby.Exec(ctx, "SELECT pg_wal_replay_pause()"); err != nil {
		t.Fatal(err)
	}
	if _, err := prim.Exec(ctx, "CREATE TABLE lagtest (i int)"); err != nil {
		t.Fatal(err)
	}
	var lag float64
	waitFor(t, "node1 lag over 1s", func() bool {
		if _, err := prim.Exec(ctx, "INSERT INTO lagtest VALUES (1)"); err != nil {
			t.Fatal(err)
		}
		for _, s := range l.Status() {
			if s.Name == "node1" && s.LagSeconds != nil {
				lag = *s.LagSeconds
			}
		}
		return lag > 1
	})
	if n, _, err := l.Route(routing.ReadOnly); err != nil || n != "node0" {
		t.Fatalf("node1 %.1f s behind, routed to %s (%v)", lag, n, err)
	}
}

// statusNodes is /status's nodes as JSON objects by name, so that an absent key shows.
func statusNodes(t *testing.T, l *Listener) map[string]map[string]any {
	t.Helper()
	var st struct {
		Nodes []map[string]any `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(httpGet(t, "http://"+l.MetricsAddr().String()+"/status")), &st); err != nil {
		t.Fatal(err)
	}
	m := map[string]map[string]any{}
	for _, n := range st.Nodes {
		m[n["name"].(string)] = n
	}
	return m
}

// lagMetric is the node's agbench_listener_backend_lag_seconds line, "" when absent.
func lagMetric(t *testing.T, l *Listener, node string) string {
	t.Helper()
	for _, line := range strings.Split(httpGet(t, "http://"+l.MetricsAddr().String()+"/metrics"), "\n") {
		if strings.HasPrefix(line, `agbench_listener_backend_lag_seconds{node="`+node+`"}`) {
			return line
		}
	}
	return ""
}

// Absent is not zero. A listener started while the primary is down knows no
// standby lag: /status has no lag_seconds (lag_unknown says why), /metrics no lag line, and
// --max-lag skips the standby saying so. Once the primary runs, the standby's lag is
// measured and the primary still has none.
func TestLagAbsentUntilMeasuredWithCluster(t *testing.T) {
	t.Parallel() // owns its cluster: it stops the primary
	h := clustertest.NewHandmade(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := h.Stop(ctx, 0); err != nil {
		t.Fatal(err)
	}
	var backends []Backend
	for i, name := range []string{"node0", "node1"} {
		backends = append(backends, Backend{Name: name, Addr: fmt.Sprintf("127.0.0.1:%d", h.Ports[i]), ProbeConnString: h.ConnString(i, clustertest.HandmadeApp)})
	}
	l, err := Start(ctx, Config{Listen: "127.0.0.1:0", Metrics: "127.0.0.1:0", Backends: backends, Routing: true,
		RoutingList: "('node1','node0')", MaxLag: time.Second, ProbeInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	readIntent := fmt.Sprintf("host=127.0.0.1 port=%d user=app password=%s dbname=app sslmode=disable agbench.intent=read-only",
		l.Addr().(*net.TCPAddr).Port, clustertest.HandmadeAppPW)

	st := statusNodes(t, l)
	for name, why := range map[string]string{"node0": "down", "node1": "no primary's WAL position seen yet"} {
		if _, ok := st[name]["lag_seconds"]; ok || st[name]["lag_unknown"] != why {
			t.Errorf("%s with the primary down: %v; want no lag_seconds, lag_unknown %q", name, st[name], why)
		}
		if m := lagMetric(t, l, name); m != "" {
			t.Errorf("%s with the primary down: metric %q", name, m)
		}
	}
	c, err := pgconn.Connect(ctx, readIntent)
	if err == nil {
		c.Close(ctx)
		t.Fatal("a read-intent session passed --max-lag with the standby's lag unknown")
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("refusal %v: not the listener's", err)
	}
	if want := "node1: lag unknown (no primary's WAL position seen yet), max 1s"; !strings.Contains(pe.Message, want) ||
		!strings.Contains(pe.Hint, "a standby whose lag is unknown takes sessions once") {
		t.Fatalf("refusal %v (hint %q); want it to say %q, and the hint when it takes sessions again", err, pe.Hint, want)
	}

	h.Start(ctx, t, 0)
	waitFor(t, "node1's lag measured", func() bool {
		_, ok := statusNodes(t, l)["node1"]["lag_seconds"]
		return ok
	})
	st = statusNodes(t, l)
	if _, ok := st["node0"]["lag_seconds"]; ok || st["node0"]["role"] != "primary" || st["node0"]["lag_unknown"] != "not a standby (primary)" {
		t.Errorf("the primary: %v; want no lag_seconds", st["node0"])
	}
	if m := lagMetric(t, l, "node0"); m != "" {
		t.Errorf("the primary's lag metric %q", m)
	}
	if m := lagMetric(t, l, "node1"); !strings.HasPrefix(m, `agbench_listener_backend_lag_seconds{node="node1"} `) {
		t.Errorf("node1's lag metric absent once measured")
	}
	waitFor(t, "read intent on node1", func() bool { n, _, err := l.Route(routing.ReadOnly); return err == nil && n == "node1" })
}
