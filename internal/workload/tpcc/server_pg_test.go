package tpcc

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// A login that is no superuser cannot take the superuser_reserved_connections slots: the
// check counts them out and says so, and a superuser's check does not.
func TestCheckCapacityCountsReservedSlots(t *testing.T) {
	t.Parallel()
	topo := clustertest.Shared(t, clustertest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, c := range []struct {
		cs       string
		reserved func(int) int
	}{
		{clustertest.OrdinaryConnString(topo, topo.Primary()), func(r int) int { return r }},
		{topo.ConnString(topo.Primary(), topo.Database), func(int) int { return 0 }},
	} {
		conn, err := pgx.Connect(ctx, c.cs)
		if err != nil {
			t.Fatal(err)
		}
		var maxConn, superReserved int
		if err := conn.QueryRow(ctx, `SELECT current_setting('max_connections')::int, current_setting('superuser_reserved_connections')::int`).Scan(&maxConn, &superReserved); err != nil {
			t.Fatal(err)
		}
		err = CheckCapacity(ctx, conn, maxConn+1, 1, "--vus")
		want := "(1 of them agbench's own), which accepts "
		wantReserved := fmt.Sprintf("(max_connections %d, %d reserved that this user may not use, ", maxConn, c.reserved(superReserved))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), wantReserved) {
			t.Errorf("%v; want %q and %q", err, want, wantReserved)
		}
		if err := CheckCapacity(ctx, conn, 1, 1, "--vus"); err != nil {
			t.Error(err)
		}
		conn.Close(ctx)
	}
}
