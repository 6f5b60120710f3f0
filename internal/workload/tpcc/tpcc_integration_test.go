package tpcc

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

func mustCheck(t *testing.T, ctx context.Context, conn *pgx.Conn, when string) {
	t.Helper()
	res, err := Check(ctx, conn)
	if err != nil {
		t.Fatalf("check %s: %v", when, err)
	}
	if len(res) != len(Conditions) {
		t.Fatalf("check %s: %d results", when, len(res))
	}
	for _, r := range res {
		if r.Violations != 0 {
			t.Errorf("check %s: condition %s (%s): %d violations", when, r.Clause, r.Name, r.Violations)
		}
	}
}

// TestBuildRunCheck builds on a real cluster, interrupts and rebuilds, runs every
// transaction in both modes (the read-only ones also on the standby), and checks the
// consistency conditions before and after.
func TestBuildRunCheck(t *testing.T) {
	t.Parallel()
	topo := clustertest.Shared(t, clustertest.Options{Standbys: 1})
	db := clustertest.OwnDatabase(t, topo)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg, err := ConnConfig(topo.ConnString(topo.Primary(), db), "--primary")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := Connect(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	// Before a build: check is bad input.
	if _, err := Check(ctx, conn); !errors.Is(err, ErrNotBuilt) || !agerr.IsBadInput(err) {
		t.Fatalf("check before build: %v, want bad input ErrNotBuilt", err)
	}

	// An interrupted build leaves a half-built schema that check refuses and build replaces.
	p := &Progress{}
	cut, stop := context.WithCancel(ctx)
	go func() {
		for cut.Err() == nil {
			if _, rows, _ := p.Snapshot(); rows > 50000 {
				stop()
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	if _, err := Build(cut, cfg, BuildOptions{Warehouses: 2, Loaders: 2, Seed: 1, Progress: p}); err == nil {
		t.Fatal("build survived its cancellation")
	}
	stop()
	if _, err := Check(ctx, conn); !errors.Is(err, ErrHalfBuilt) || !agerr.IsBadInput(err) {
		t.Fatalf("check on a half-built schema: %v, want bad input ErrHalfBuilt", err)
	}

	rep, err := Build(ctx, cfg, BuildOptions{Warehouses: 2, Loaders: 2, Seed: 1, Progress: p})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	if ph, _, _ := p.Snapshot(); ph != PhaseDone {
		t.Errorf("progress phase %q after build", ph)
	}
	if rep.Rows < Items+2*RowsPerWarehouse*9/10 {
		t.Errorf("build loaded %d rows", rep.Rows)
	}
	t.Logf("build of 2 warehouses: %v (load %v, indexes %v), %d rows", rep.Total, rep.Load, rep.Indexes, rep.Rows)
	if _, err := Build(ctx, cfg, BuildOptions{Warehouses: 1, Loaders: 1, Seed: 1}); !errors.Is(err, ErrAlreadyBuilt) || !agerr.IsBadInput(err) {
		t.Fatalf("second build: %v, want bad input ErrAlreadyBuilt", err)
	}
	meta, err := RequireReady(ctx, conn)
	if err != nil || meta.Warehouses != 2 || meta.C != rep.Constants {
		t.Fatalf("meta %+v, %v", meta, err)
	}
	mustCheck(t, ctx, conn, "after build")
	before, err := ReadCounters(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}

	standby, err := ConnConfig(topo.ConnString(topo.Standbys()[0], db), "--standby")
	if err != nil {
		t.Fatal(err)
	}
	read, err := Connect(ctx, standby)
	if err != nil {
		t.Fatal(err)
	}
	defer read.Close(ctx)
	waitReplayed(t, ctx, read)

	newOrders := 0
	for _, mode := range []Mode{ModeFunctions, ModeClient} {
		g := NewRand(7, uint64(len(mode)))
		s := &Session{Primary: conn, Read: read, Mode: mode,
			T: &Terminal{G: g, C: RunConstants(g, meta.C), Warehouses: 2, HomeW: 1, HomeD: 3}}
		for _, k := range Kinds {
			for i := 0; i < 30; i++ {
				out, err := s.Run(ctx, k)
				if err != nil {
					t.Fatalf("%s %s: %v", mode, k, err)
				}
				if out.OnRead != k.ReadOnly() {
					t.Fatalf("%s %s: on read-intent connection = %v", mode, k, out.OnRead)
				}
				if k == NewOrder && !out.RolledBack {
					newOrders++
				}
			}
		}
		// The 1% rollback, forced: nothing of the order stays.
		in := s.T.NewOrder()
		in.Items[len(in.Items)-1].ID = unusedItem
		if err := s.newOrder(ctx, conn, in); !errors.Is(err, errRolledBack) {
			t.Fatalf("%s: new-order with an unused item: %v, want a rollback", mode, err)
		}
		// Remote items and payments with a remote customer.
		in = s.T.NewOrder()
		in.Items[0].SupplyW, in.AllLocal = 2, false
		if err := s.newOrder(ctx, conn, in); err != nil {
			t.Fatalf("%s: remote new-order: %v", mode, err)
		}
		newOrders++
		// An item twice in one order takes the line-by-line path of neword.
		in = s.T.NewOrder()
		in.Items[1] = in.Items[0]
		if err := s.newOrder(ctx, conn, in); err != nil {
			t.Fatalf("%s: new-order with a repeated item: %v", mode, err)
		}
		newOrders++
		pay := s.T.Payment()
		pay.CW, pay.CD, pay.CLast, pay.C = 2, 9, "BARBARBAR", 0
		if err := s.payment(ctx, conn, pay); err != nil {
			t.Fatalf("%s: remote payment by name: %v", mode, err)
		}
	}
	var inRecovery bool
	if err := read.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&inRecovery); err != nil || !inRecovery {
		t.Fatalf("the read-intent connection is not on a standby: %v %v", inRecovery, err)
	}
	after, err := ReadCounters(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.NewOrders - before.NewOrders; got != int64(newOrders) {
		t.Errorf("districts' next order ids moved by %d, client committed %d new orders", got, newOrders)
	}
	mustCheck(t, ctx, conn, "after the transactions")

	if found, err := Drop(ctx, conn, false); err != nil || !found {
		t.Fatalf("drop: %v %v", found, err)
	}
	if m, err := ReadMeta(ctx, conn); m != nil || err != nil {
		t.Fatalf("after drop: %v %v", m, err)
	}
	// A schema tpcc that this agbench did not make is refused, not dropped.
	if _, err := conn.Exec(ctx, "CREATE SCHEMA tpcc; CREATE TABLE tpcc.warehouse (w_id int)"); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(ctx, cfg, BuildOptions{Warehouses: 1, Loaders: 1}); !errors.Is(err, ErrForeign) || !agerr.IsBadInput(err) {
		t.Fatalf("build over a foreign schema: %v, want bad input ErrForeign", err)
	}
	if _, err := Drop(ctx, conn, false); !errors.Is(err, ErrForeign) {
		t.Fatalf("drop of a foreign schema: %v", err)
	}
}

// waitReplayed waits until the standby has replayed the finished build.
func waitReplayed(t *testing.T, ctx context.Context, read *pgx.Conn) {
	t.Helper()
	for {
		m, err := ReadMeta(ctx, read)
		if err == nil && m != nil && m.State == StateReady {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("standby never replayed the build: %v %v", m, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
