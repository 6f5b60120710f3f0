package listener

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// The Patroni probe reads role, WAL position, pause and timeline from GET /patroni as
// Patroni 3.0 writes it, and fails for a member whose PostgreSQL is not running.
func TestProbePatroni(t *testing.T) {
	for _, c := range []struct {
		name, body string
		code       int
		want       probeResult
		fails      bool
	}{
		{"primary", `{"state":"running","role":"master","timeline":3,"xlog":{"location":67108864}}`, 200,
			probeResult{lsn: 67108864, timeline: 3}, false},
		{"primary, newer Patroni", `{"state":"running","role":"primary","timeline":2,"xlog":{"location":5}}`, 200,
			probeResult{lsn: 5, timeline: 2}, false},
		{"replica", `{"state":"running","role":"replica","xlog":{"received_location":90,"replayed_location":80,"paused":true}}`, 503,
			probeResult{inRecovery: true, paused: true, lsn: 80}, false},
		{"stopped", `{"state":"stopped","role":"replica"}`, 503, probeResult{}, true},
		{"not json", `<html>`, 200, probeResult{}, true},
		{"odd role", `{"state":"running","role":"uninitialized"}`, 200, probeResult{}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/patroni" {
					http.NotFound(w, r)
					return
				}
				w.WriteHeader(c.code)
				w.Write([]byte(c.body))
			}))
			defer srv.Close()
			got, err := probePatroni(context.Background(), srv.URL)
			if (err != nil) != c.fails || got != c.want {
				t.Fatalf("got %+v, %v; want %+v (fails %v)", got, err, c.want, c.fails)
			}
		})
	}
}

// TestPatroniRolesWithCluster fronts a cluster under Patroni: the listener takes roles
// from Patroni's REST API. When the primary's Patroni is killed (its PostgreSQL left
// running and writable: no watchdog), Patroni promotes the standby; the listener counts the
// old node down — its Patroni does not answer — and sends writes to the new primary only,
// where probing the servers would see two writable nodes.
func TestPatroniRolesWithCluster(t *testing.T) {
	t.Parallel() // owns its cluster: it kills a Patroni member
	clustertest.RequirePatroni(t)
	topo := clustertest.NewIn(t, clustertest.Home(t), clustertest.Options{Standbys: 1, HA: cluster.HAPatroni})
	e := startPG(t, topo, Config{Routing: true})
	old := topo.Primary().Name
	waitFor(t, "the listener to see "+old+" primary", func() bool { return e.status(old).Role == "primary" })
	if n, rec := e.where(e.l.Addr().String(), ""); n != old || rec {
		t.Fatalf("write session on %s (in recovery %v), want %s", n, rec, old)
	}

	if err := topo.KillPatroni(old); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = topo.StartPatroni(old) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	promoted, err := topo.WaitPatroniPromoted(ctx, old, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the listener to follow Patroni to "+promoted.Name, func() bool {
		return e.status(promoted.Name).Role == "primary" && !e.status(old).Up
	})
	if !topo.Running()[old] {
		t.Fatalf("%s's PostgreSQL stopped: the case under test is a primary left running", old)
	}
	if n, rec := e.where(e.l.Addr().String(), ""); n != promoted.Name || rec {
		t.Fatalf("write session on %s (in recovery %v), want %s", n, rec, promoted.Name)
	}

	if err := topo.StartPatroni(old); err != nil {
		t.Fatal(err)
	}
	if err := topo.WaitPatroniWhole(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the listener to see "+old+" a standby again", func() bool { return e.status(old).Up && e.status(old).Role == "standby" })
}
