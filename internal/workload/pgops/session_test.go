package pgops

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// Queries run under a context that is never done, yet ending the watched context ends the
// query in flight promptly, and a context ended before the query refuses it at once.
func TestSessionContextEndsTheQueryInFlight(t *testing.T) {
	clustertest.Require(t)
	topo := clustertest.New(t, clustertest.Options{})
	ctx := context.Background()
	c, err := pgx.Connect(ctx, topo.ConnString(topo.Primary(), ""))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	one, err := c.Prepare(ctx, "one", `SELECT $1::int + 1`)
	if err != nil {
		t.Fatal(err)
	}
	sleep, err := c.Prepare(ctx, "sleep", `SELECT pg_sleep($1::float8)`)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSessionContext(c.PgConn())
	vu, cancel := context.WithCancel(ctx)
	q := s.For(vu)
	if q.Done() != nil {
		t.Fatal("the query context can be cancelled: pgx would watch it on every query")
	}
	if s.For(vu) != q {
		t.Fatal("a second query under the same context made a new one")
	}
	for i := 0; i < 100; i++ {
		if rows, bytes, err := s.Run(vu, one, [][]byte{[]byte(strconv.Itoa(i))}); err != nil || rows != 1 || bytes != int64(len(strconv.Itoa(i+1))) {
			t.Fatalf("query %d: %d rows, %d bytes, %v", i, rows, bytes, err)
		}
	}
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, _, err = s.Run(vu, sleep, [][]byte{[]byte("60")})
	if err == nil || time.Since(start) > 20*time.Second {
		t.Fatalf("sleep under a cancelled context: %v after %v", err, time.Since(start))
	}
	if q := s.For(vu); q.Err() == nil {
		t.Fatal("a context that has ended gave a live one")
	}
	s.Stop()

	// A second session, on a connection of the usual (poller) kind.
	c2, err := pgx.Connect(ctx, topo.ConnString(topo.Primary(), ""))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close(ctx)
	sleep2, err := c2.Prepare(ctx, "sleep", `SELECT pg_sleep($1::float8)`)
	if err != nil {
		t.Fatal(err)
	}
	// A context that ends while the session is idle leaves the connection usable: it can
	// run another query (and close cleanly, with a Terminate).
	s2 := NewSessionContext(c2.PgConn())
	vu2, cancel2 := context.WithCancel(ctx)
	if _, _, err := s2.Run(vu2, sleep2, [][]byte{[]byte("0")}); err != nil {
		t.Fatal(err)
	}
	cancel2()
	time.Sleep(50 * time.Millisecond)
	s2.Stop()
	if _, _, err := Run(context.Background(), c2.PgConn(), sleep2, [][]byte{[]byte("0.3")}); err != nil {
		t.Fatalf("query after the watch stopped: %v", err)
	}
}
