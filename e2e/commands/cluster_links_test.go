package commands

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// A cluster with links: clients reach the nodes through them and pay the latency on every
// round trip; the standby streams through the primary's link; stop, start and destroy
// handle the links process.
func TestClusterLinksAddLatencyForClientsAndReplication(t *testing.T) {
	t.Parallel()
	clustertest.Require(t)
	if code, _, errs := e2etest.Run(t, map[string]string{"AGBENCH_HOME": t.TempDir()}, "cluster", "create", "--link-latency", "soon"); code != 2 || !strings.Contains(errs, "--link-latency") {
		t.Fatalf("bad --link-latency: %d %s", code, errs)
	}
	if code, _, errs := e2etest.Run(t, map[string]string{"AGBENCH_HOME": t.TempDir()}, "cluster", "create", "--link-bandwidth", "10"); code != 2 || !strings.Contains(errs, "--link-bandwidth") {
		t.Fatalf("bad --link-bandwidth: %d %s", code, errs)
	}
	home := clustertest.Home(t)
	env := map[string]string{"AGBENCH_HOME": home}
	base, err := clustertest.FreePorts(30)
	if err != nil {
		t.Fatal(err)
	}
	const latency = 5 * time.Millisecond
	code, out, errs := e2etest.Run(t, env, "cluster", "create", "--name", "lk", "--standbys", "1", "--base-port", strconv.Itoa(base),
		"--set", "fsync=off", "--link-latency", latency.String(), "--link-bandwidth", "2M")
	if code != 0 {
		t.Fatalf("create: %d %s %s", code, out, errs)
	}
	t.Cleanup(func() { e2etest.Run(t, env, "cluster", "destroy", "--name", "lk") })
	topo, err := cluster.Load(home, "lk")
	if err != nil || topo.Links == nil || topo.Links.PID == 0 || topo.Primary().LinkPort == 0 || topo.Links.Bandwidth != 2<<20 {
		t.Fatalf("topology's links: %+v %v", topo.Links, err)
	}
	ctx := context.Background()
	roundTrip := func(cs string) time.Duration {
		t.Helper()
		c, err := pgx.Connect(ctx, cs)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		start := time.Now()
		for range 10 {
			if _, err := c.Exec(ctx, "SELECT 1"); err != nil {
				t.Fatal(err)
			}
		}
		return time.Since(start) / 10
	}
	// Through the link every round trip takes at least the latency (a delay is never shorter).
	if rt := roundTrip(topo.ConnString(topo.Primary(), "")); rt < latency {
		t.Fatalf("a round trip through a %v link took %v", latency, rt)
	}
	// A megabyte from the server takes at least what the link's bandwidth allows (the toxic
	// may pass 100 ms' worth at once; a busy machine can only make it slower).
	c := connect(t, topo.ConnString(topo.Primary(), ""))
	start := time.Now()
	var big string
	if err := c.QueryRow(ctx, `SELECT repeat('x', 1000000)`).Scan(&big); err != nil || len(big) != 1000000 {
		t.Fatalf("%d bytes, %v", len(big), err)
	}
	if took, least := time.Since(start), time.Second*1e6/(2<<20)-100*time.Millisecond; took < least {
		t.Fatalf("a megabyte through a 2 MiB/s link in %v: want at least %v", took, least)
	}
	// The standby streams from the primary's link.
	p := connect(t, topo.ConnString(topo.Primary(), ""))
	var addrPort string
	if err := p.QueryRow(ctx, `SELECT client_port::text FROM pg_stat_replication WHERE application_name = 'standby1'`).Scan(&addrPort); err != nil {
		t.Fatalf("standby1 does not stream: %v", err)
	}
	s := connect(t, topo.ConnString(topo.Standbys()[0], ""))
	var conninfo string
	if err := s.QueryRow(ctx, `SELECT current_setting('primary_conninfo')`).Scan(&conninfo); err != nil ||
		!strings.Contains(conninfo, "port="+strconv.Itoa(topo.Primary().LinkPort)) {
		t.Fatalf("standby's primary_conninfo %q (%v) does not go through the primary's link %d", conninfo, err, topo.Primary().LinkPort)
	}
	if _, out, _ := e2etest.Run(t, env, "cluster", "status", "--name", "lk"); !strings.Contains(out, "links with 5ms latency per round trip and 2 MiB/s each way per connection") {
		t.Fatalf("status does not show the links:\n%s", out)
	}
	pid := topo.Links.PID
	if code, out, errs := e2etest.Run(t, env, "cluster", "stop", "--name", "lk"); code != 0 {
		t.Fatalf("stop: %s %s", out, errs)
	}
	if cluster.Alive(pid) {
		t.Fatal("links still served after cluster stop")
	}
	if code, out, errs := e2etest.Run(t, env, "cluster", "start", "--name", "lk"); code != 0 {
		t.Fatalf("start: %s %s", out, errs)
	}
	topo, _ = cluster.Load(home, "lk")
	if !topo.LinksAlive() {
		t.Fatal("cluster start did not bring the links back")
	}
	pid = topo.Links.PID
	if code, out, errs := e2etest.Run(t, env, "cluster", "destroy", "--name", "lk"); code != 0 {
		t.Fatalf("destroy: %s %s", out, errs)
	}
	if cluster.Alive(pid) {
		t.Fatal("links still served after destroy")
	}
}

func connect(t *testing.T, cs string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), cs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}
