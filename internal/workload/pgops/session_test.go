package pgops

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// Queries run under a context that is never done, yet ending the watched context ends the
// query in flight promptly, and a context ended before the query refuses it at once.
func TestSessionContextEndsTheQueryInFlight(t *testing.T) {
	t.Parallel()
	topo := clustertest.Shared(t, clustertest.Options{})
	ctx := context.Background()
	c := connect(t, topo)
	one := prepare(t, c, "one", `SELECT $1::int + 1`)
	sleep := prepare(t, c, "sleep", `SELECT pg_sleep($1::float8)`)
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
	pid := c.PgConn().PID()
	// Cancelled once the server runs the sleep (after a fixed 200 ms, a busy machine could
	// cancel before the query was sent, and test only the refusal below).
	watch := connect(t, topo)
	sleeping := make(chan error, 1)
	go func() {
		defer cancel()
		for deadline := time.Now().Add(50 * time.Second); ; { // the sleep lasts 60 s
			var n int
			err := watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND state = 'active' AND wait_event = 'PgSleep'`, pid).Scan(&n)
			if err == nil && n == 0 && time.Now().After(deadline) {
				err = fmt.Errorf("the sleep never showed in pg_stat_activity (pid %d)", pid)
			}
			if err != nil || n > 0 {
				sleeping <- err
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	start := time.Now()
	_, _, err := s.Run(vu, sleep, [][]byte{[]byte("60")})
	if werr := <-sleeping; werr != nil {
		t.Fatal(werr)
	}
	if err == nil || time.Since(start) > 20*time.Second {
		t.Fatalf("sleep under a cancelled context: %v after %v", err, time.Since(start))
	}
	// The query is over on the server too, not left sleeping into the next step.
	for deadline := time.Now().Add(10 * time.Second); ; {
		var active int
		if err := watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND state = 'active'`, pid).Scan(&active); err != nil {
			t.Fatal(err)
		}
		if active == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ended query still runs on the server (pid %d) %v after the cut", pid, time.Since(start))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if q := s.For(vu); q.Err() == nil {
		t.Fatal("a context that has ended gave a live one")
	}
	s.Stop()

	// A second session, on a connection of the usual (poller) kind.
	c2 := connect(t, topo)
	sleep2 := prepare(t, c2, "sleep", `SELECT pg_sleep($1::float8)`)
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

// The lean path (a context that is never done) and pgx's result reader report the same rows
// and bytes; an SQL error leaves the session usable; notices and parameter changes are
// passed over; a session ended by the server is closed.
func TestRunLeanAgreesWithPgx(t *testing.T) {
	t.Parallel()
	topo := clustertest.Shared(t, clustertest.Options{})
	ctx := context.Background()
	c := connect(t, topo)
	rowsOf := prepare(t, c, "rows", `SELECT g, repeat('x', g), NULL::text FROM generate_series(1, $1::int) g`)
	div := prepare(t, c, "div", `SELECT 10 / $1::int`)
	set := prepare(t, c, "set", `SELECT set_config('application_name', $1, false)`)
	pid := prepare(t, c, "pid", `SELECT pg_backend_pid()`)
	watched, cancel := context.WithCancel(ctx) // Done() != nil: pgx's result reader
	defer cancel()
	for _, n := range []string{"0", "1", "7", "300"} {
		lr, lb, lerr := Run(ctx, c.PgConn(), rowsOf, [][]byte{[]byte(n)})
		pr, pb, perr := Run(watched, c.PgConn(), rowsOf, [][]byte{[]byte(n)})
		if lerr != nil || perr != nil || lr != pr || lb != pb {
			t.Fatalf("%s rows: lean %d rows %d bytes (%v), pgx %d rows %d bytes (%v)", n, lr, lb, lerr, pr, pb, perr)
		}
	}
	_, _, err := Run(ctx, c.PgConn(), div, [][]byte{[]byte("0")})
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "22012" {
		t.Fatalf("division by zero: %v", err)
	}
	if rows, _, err := Run(ctx, c.PgConn(), div, [][]byte{[]byte("5")}); err != nil || rows != 1 {
		t.Fatalf("query after an SQL error: %d rows, %v", rows, err)
	}
	if rows, _, err := Run(ctx, c.PgConn(), set, [][]byte{[]byte("lean-test")}); err != nil || rows != 1 {
		t.Fatalf("set_config (the server reports the new application_name): %d rows, %v", rows, err)
	}
	if _, err := c.Exec(ctx, "CREATE FUNCTION pg_temp.noisy() RETURNS int LANGUAGE plpgsql AS $$BEGIN RAISE NOTICE 'hello'; RETURN 1; END$$"); err != nil {
		t.Fatal(err)
	}
	noisy := prepare(t, c, "noisy", `SELECT pg_temp.noisy()`)
	if rows, bytes, err := Run(ctx, c.PgConn(), noisy, nil); err != nil || rows != 1 || bytes != 1 {
		t.Fatalf("a query that raises a notice: %d rows, %d bytes, %v", rows, bytes, err)
	}
	var backend int
	if err := c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		t.Fatal(err)
	}
	if rows, _, err := Run(ctx, c.PgConn(), pid, nil); err != nil || rows != 1 {
		t.Fatalf("pid: %d rows, %v", rows, err)
	}
	other := connect(t, topo)
	if _, err := other.Exec(ctx, "SELECT pg_terminate_backend($1)", backend); err != nil {
		t.Fatal(err)
	}
	_, _, err = Run(ctx, c.PgConn(), pid, nil)
	if err == nil || !c.PgConn().IsClosed() {
		t.Fatalf("a query on a terminated session: %v, closed %v", err, c.PgConn().IsClosed())
	}
	if _, _, err := Run(ctx, c.PgConn(), pid, nil); err == nil {
		t.Fatal("a query on a closed connection succeeded")
	}
}

// prepare prepares a statement or ends the test.
func prepare(t *testing.T, c *pgx.Conn, name, sql string) *pgconn.StatementDescription {
	t.Helper()
	sd, err := c.Prepare(context.Background(), name, sql)
	if err != nil {
		t.Fatal(err)
	}
	return sd
}

// connect opens a session on topo's primary, closed when the test ends.
func connect(t *testing.T, topo *cluster.Topology) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), topo.ConnString(topo.Primary(), ""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}
