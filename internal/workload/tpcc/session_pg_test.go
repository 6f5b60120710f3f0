package tpcc

import (
	"context"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// TestDeliveryUpdatesStayHOT checks that Delivery's updates of the order lines are
// heap-only in both modes: the lines of the initial undelivered orders, loaded with the
// order lines' fillfactor, take their new versions on their own pages without new index
// entries. A standby's hot_standby_feedback would keep the old versions of the last seconds
// from being pruned, so the cluster has none.
func TestDeliveryUpdatesStayHOT(t *testing.T) {
	t.Parallel()
	// A server of its own, without standbys: an update stays on its page only where the
	// old versions can be pruned, and another test's snapshot on a shared server (or a
	// standby's feedback) holds them back; then 80% of the updates were heap-only in CI.
	topo := clustertest.New(t, clustertest.Options{Standbys: 0})
	db := "" // the cluster is the test's own: its database too
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg, err := ConnConfig(topo.ConnString(topo.Primary(), db), "--primary")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(ctx, cfg, BuildOptions{Warehouses: 1, Loaders: 1, Seed: 4})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	conn, err := Connect(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, mode := range []Mode{ModeFunctions, ModeClient} {
		g := NewRand(5, uint64(len(mode)))
		s := &Session{Primary: conn, Mode: mode, T: &Terminal{G: g, C: RunConstants(g, rep.Constants), Warehouses: 1, HomeW: 1, HomeD: 1}}
		for i := 0; i < 15; i++ {
			if _, err := s.Run(ctx, Delivery); err != nil {
				t.Fatalf("%s: delivery %d: %v", mode, i, err)
			}
			if s.Delivered != DistrictsPerWH {
				t.Fatalf("%s: delivery %d delivered %d districts", mode, i, s.Delivered)
			}
		}
	}
	var lines int64
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM tpcc.order_line WHERE ol_o_id >= $1 AND ol_delivery_d IS NOT NULL`,
		FirstUndelivered).Scan(&lines); err != nil {
		t.Fatal(err)
	}
	// The session's statistics reach the shared ones when it next goes idle.
	if _, err := conn.Exec(ctx, "SELECT pg_stat_force_next_flush()"); err != nil {
		t.Fatal(err)
	}
	check, err := Connect(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close(ctx)
	var upd, hot int64
	for upd < lines {
		if err := check.QueryRow(ctx, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables
			WHERE schemaname = 'tpcc' AND relname = 'order_line'`).Scan(&upd, &hot); err != nil {
			t.Fatalf("waiting for %d order-line updates in the statistics (%d so far): %v", lines, upd, err)
		}
	}
	if upd != lines || float64(hot) < 0.9*float64(upd) {
		t.Errorf("%d order lines delivered, %d updates of which %d heap-only: want all of them counted and ≥ 90%% heap-only", lines, upd, hot)
	}
}

// TestCancelEndsATransactionInFlight checks that a transaction waiting on the server ends
// when its context does, in both modes (the session's context is watched once per session,
// not by pgx per statement), and that the session is then closed as pgx closes it.
func TestCancelEndsATransactionInFlight(t *testing.T) {
	t.Parallel()
	topo := clustertest.Shared(t, clustertest.Options{Standbys: 1})
	db := clustertest.OwnDatabase(t, topo)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg, err := ConnConfig(topo.ConnString(topo.Primary(), db), "--primary")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(ctx, cfg, BuildOptions{Warehouses: 1, Loaders: 1, Seed: 6})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	holder, err := Connect(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	// pg_stat_activity is read from a session of its own: a transaction keeps its first view.
	check, err := Connect(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close(ctx)
	// Payment updates the warehouse's row: held here, it waits.
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, "SELECT 1 FROM tpcc.warehouse WHERE w_id = 1 FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []Mode{ModeFunctions, ModeClient} {
		conn, err := Connect(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		g := NewRand(7, uint64(len(mode)))
		s := &Session{Primary: conn, Mode: mode, T: &Terminal{G: g, C: RunConstants(g, rep.Constants), Warehouses: 1, HomeW: 1, HomeD: 1}}
		// A first transaction under a context of its own, so that the second's is watched anew.
		if _, err := s.Run(context.WithoutCancel(ctx), OrderStatus); err != nil {
			t.Fatalf("%s: order-status: %v", mode, err)
		}
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := s.Run(runCtx, Payment)
			done <- err
		}()
		// Cancel once the payment waits for the lock (the holder's session waits for nothing).
		for {
			var waiting bool
			if err := check.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity WHERE datname = current_database()
				AND wait_event_type = 'Lock' AND pid <> pg_backend_pid())`).Scan(&waiting); err != nil {
				t.Fatal(err)
			}
			if waiting {
				break
			}
		}
		stop()
		if err := <-done; err == nil {
			t.Errorf("%s: a payment cancelled while it waited for a lock succeeded", mode)
		}
		if !conn.IsClosed() {
			t.Errorf("%s: the session of a cancelled transaction is still open", mode)
		}
	}
}
