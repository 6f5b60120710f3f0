package listener

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// TestStandbyShuttingDownRetriesOnTheOther stops a standby in smart mode while a session
// holds it open: it stays in "shutting down" and answers every new session with 57P03,
// while its old sessions, the listener's probe among them, keep working, so no probe
// notices. A read-only session through the listener goes to the other member of the
// load-balanced set, and with both standbys shutting down to the primary, listed last.
func TestStandbyShuttingDownRetriesOnTheOther(t *testing.T) {
	t.Parallel() // owns its cluster: it stops both standbys
	topo := clustertest.New(t, clustertest.Options{Standbys: 2})
	ctx := context.Background()
	// Probes too rare to matter: only sessions find the refusals.
	e := startPG(t, topo, Config{Routing: true, RoutingList: "(('standby1','standby2'),'primary')", ProbeInterval: time.Hour})
	addr := e.l.Addr().String()
	shutDown := func(node string) {
		t.Helper()
		hold, err := pgconn.Connect(ctx, topo.ConnString(topo.Node(node), ""))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { hold.Close(context.Background()) })
		n := topo.Node(node)
		if out, err := topo.OSUser.Command(ctx, topo.PG.Path("pg_ctl"), "stop", "-W", "-m", "smart", "-D", n.DataDir).CombinedOutput(); err != nil {
			t.Fatalf("pg_ctl stop -m smart: %v\n%s", err, out)
		}
		waitFor(t, node+" to refuse new sessions", func() bool {
			c, err := pgconn.Connect(ctx, topo.ConnString(n, ""))
			if err == nil {
				c.Close(ctx)
			}
			var pe *pgconn.PgError
			return errors.As(err, &pe) && pe.Code == codeCannotConnectNow
		})
	}

	shutDown("standby1")
	for i := 0; i < 4; i++ {
		if n, rec := e.where(addr, "agbench.intent=read-only"); n != "standby2" || !rec {
			t.Fatalf("session %d with standby1 shutting down went to %s", i, n)
		}
	}
	if st := e.status("standby1"); !st.Up || !strings.Contains(st.Refusing, "the database system is shutting down (57P03)") {
		t.Errorf("standby1 status %+v", st)
	}

	shutDown("standby2")
	if n, rec := e.where(addr, "agbench.intent=read-only"); n != "primary" || rec {
		t.Fatalf("with both standbys shutting down: %s, want the primary", n)
	}
	if r := e.l.Counts().Retries; r["standby1/cannot_connect_now"] != 1 || r["standby2/cannot_connect_now"] != 1 || len(r) != 2 {
		t.Errorf("retries %v", r)
	}
	if s := e.l.Counts().Sessions; s["read-only/standby2"] != 4 || s["read-only/primary"] != 1 {
		t.Errorf("sessions %v", s)
	}
}
