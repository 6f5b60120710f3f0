package e2etest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/listener"
	"github.com/agbench/agbench/internal/proc"
	"github.com/agbench/agbench/internal/workload/pgops"
	"github.com/agbench/agbench/internal/workload/tpcc"
)

// What the tests that fault a hand-made cluster mid-run share: a listener in front of it,
// a fault timed from the load's start inside the server, and the faults themselves.

// HandmadeListener starts an agbench listener in front of a hand-made cluster (node 0
// primary, the others standbys), probing as the ordinary login, and returns a connection
// string to it for that login.
func HandmadeListener(t *testing.T, h *clustertest.Handmade, routingList string) string {
	t.Helper()
	cfg := listener.Config{Listen: "127.0.0.1:0", Routing: true, RoutingList: routingList, ProbeInterval: 200 * time.Millisecond}
	for i, port := range h.Ports {
		name := "primary"
		if i > 0 {
			name = fmt.Sprintf("standby%d", i)
		}
		cfg.Backends = append(cfg.Backends, listener.Backend{Name: name, Addr: fmt.Sprintf("127.0.0.1:%d", port),
			ProbeConnString: h.ConnString(i, clustertest.HandmadeApp)})
	}
	l, err := listener.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	// Every node of h is running: wait until the listener has found each up in its role, so
	// that a load-balanced set spreads the run's first sessions over all its standbys (a
	// probe slowed by a busy machine would otherwise send them all to the one probed first).
	for deadline := time.Now().Add(2 * time.Minute); ; {
		up := 0
		for _, n := range l.Status() {
			if n.Up && n.Role != "unknown" { // a test may have made a stale primary on purpose
				up++
			}
		}
		if up == len(h.Ports) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the listener did not find every node up within 2m: %+v", l.Status())
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return fmt.Sprintf("host=127.0.0.1 port=%s user=%s password=%s dbname=%s sslmode=disable",
		port, clustertest.HandmadeApp, clustertest.HandmadeAppPW, clustertest.HandmadeDatabase)
}

// AfterLoadStarts runs fault d after the run's first worker session (application_name
// agbench-worker, begun after this call) is seen on node i of h, rather than d after the
// command started: a run's window begins as its workers connect, so a start slowed by a
// busy machine cannot move the fault out of the window (or before it). Every test that
// faults a node mid-run times its fault so.
func AfterLoadStarts(t *testing.T, h *clustertest.Handmade, i int, d time.Duration, fault func(ctx context.Context) error) func() {
	t.Helper()
	return AfterLoadStartsOn(t, h.Admin(context.Background(), t, i), d, fault)
}

// AfterLoadStartsOn is AfterLoadStarts watching the server of watch, a session allowed to
// see the run's worker sessions (it closes it).
func AfterLoadStartsOn(t *testing.T, watch *pgx.Conn, d time.Duration, fault func(ctx context.Context) error) func() {
	t.Helper()
	// Only a session born from now on is this run's: a worker of an earlier run on the same
	// server (a case before this one) may still be listed while its backend exits.
	var since time.Time
	if err := watch.QueryRow(context.Background(), `SELECT clock_timestamp()`).Scan(&since); err != nil {
		t.Fatal(err)
	}
	return afterOn(t, watch, "a worker session of the run", d, fault, func(ctx context.Context) (bool, error) {
		var n int
		err := watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND backend_start > $2`, pgops.WorkerAppName, since).Scan(&n)
		return n > 0, err
	})
}

// AfterRowsOn is AfterLoadStartsOn for a load that inserts into table: the load has
// started once a row of it is committed and seen on watch's server. A worker's session can
// connect seconds before its first commit is acknowledged on a busy machine (a synchronous
// commit waits for a standby), so a fault meant to land among acknowledged operations is
// timed from the first of them.
func AfterRowsOn(t *testing.T, watch *pgx.Conn, table string, d time.Duration, fault func(ctx context.Context) error) func() {
	t.Helper()
	q := `SELECT EXISTS (SELECT FROM ` + pgx.Identifier{table}.Sanitize() + `)`
	return afterOn(t, watch, "a committed row in "+table, d, fault, func(ctx context.Context) (bool, error) {
		var ok bool
		err := watch.QueryRow(ctx, q).Scan(&ok)
		return ok, err
	})
}

// AfterNewOrdersOn is AfterLoadStartsOn for tpcc run, whose sessions are all named alike
// (those that check the database before the load too): the load has started once a
// district's next order number moved.
func AfterNewOrdersOn(t *testing.T, watch *pgx.Conn, d time.Duration, fault func(ctx context.Context) error) func() {
	t.Helper()
	const next = `SELECT sum(d_next_o_id)::int8 FROM ` + tpcc.Schema + `.district`
	var from int64
	if err := watch.QueryRow(context.Background(), next).Scan(&from); err != nil {
		t.Fatal(err)
	}
	return afterOn(t, watch, "a New-Order of the run", d, fault, func(ctx context.Context) (bool, error) {
		var n int64
		err := watch.QueryRow(ctx, next).Scan(&n)
		return n > from, err
	})
}

// afterOn runs fault, in its own goroutine, d after started (polled on watch's server, for
// up to 2 minutes) first says yes; it closes watch before the fault, which may stop its
// server. The returned function waits for the fault and reports its error.
func afterOn(t *testing.T, watch *pgx.Conn, what string, d time.Duration, fault func(ctx context.Context) error, started func(ctx context.Context) (bool, error)) func() {
	t.Helper()
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			ok, err := started(ctx)
			if err != nil {
				watch.Close(ctx)
				done <- err
				return
			}
			if ok {
				break
			}
			if time.Now().After(deadline) {
				watch.Close(ctx)
				done <- fmt.Errorf("no %s within 2m", what)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		watch.Close(ctx)
		time.Sleep(d)
		done <- fault(ctx)
	}()
	return func() {
		t.Helper()
		if err := <-done; err != nil {
			t.Fatalf("fault: %v", err)
		}
	}
}

// Failover stops the primary (fast) and promotes standby 1, as a DBA does after a failure.
func Failover(h *clustertest.Handmade) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		if err := h.Stop(ctx, 0); err != nil {
			return err
		}
		return h.Promote(ctx, 1)
	}
}

// Freeze stops node i's postmaster and every process it started (SIGSTOP) for d, then lets
// them go on (SIGCONT): a server that hangs without failing anything.
func Freeze(h *clustertest.Handmade, i int, d time.Duration) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		b, err := os.ReadFile(filepath.Join(h.DataDir(i), "postmaster.pid"))
		if err != nil {
			return err
		}
		pm, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
		if err != nil {
			return err
		}
		pids := []int{pm}
		children, err := proc.Children(proc.Root, pm)
		if err != nil {
			return err
		}
		for _, c := range children {
			pids = append(pids, c.PID)
		}
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGSTOP)
		}
		time.Sleep(d)
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGCONT)
		}
		return nil
	}
}

// OnFreePort is c listening on a free loopback port, without its read-only port and metrics.
func OnFreePort(c listener.Config) listener.Config {
	c.Listen, c.ReadOnlyListen, c.Metrics = "127.0.0.1:0", "", ""
	return c
}
