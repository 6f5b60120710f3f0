package listener

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/routing"
)

// Issue 17: the probe measures a standby's lag from positions any login may read (the
// primary's pg_current_wal_lsn() over time, the standby's pg_last_wal_replay_lsn()), so
// --max-lag works when the probe logs in as an ordinary login without pg_monitor.
func TestMaxLagWithAnUnprivilegedProbe(t *testing.T) {
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
			if s.Name == "node1" {
				lag = s.LagSeconds
			}
		}
		return lag > 1
	})
	if n, _, err := l.Route(routing.ReadOnly); err != nil || n != "node0" {
		t.Fatalf("node1 %.1f s behind, routed to %s (%v)", lag, n, err)
	}
}
