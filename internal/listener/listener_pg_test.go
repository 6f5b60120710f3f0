package listener

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// pgEnv is a real cluster with a listener in front of it.
type pgEnv struct {
	t    *testing.T
	topo *cluster.Topology
	l    *Listener
}

func startPG(t *testing.T, topo *cluster.Topology, cfg Config) *pgEnv {
	t.Helper()
	base := ConfigFromTopology(topo)
	cfg.Backends = base.Backends
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.ProbeInterval == 0 {
		cfg.ProbeInterval = 200 * time.Millisecond
	}
	l, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return &pgEnv{t: t, topo: topo, l: l}
}

// connString is a libpq connection string to addr as the cluster's superuser (SCRAM,
// password from the cluster's passfile), with extra keywords.
func (e *pgEnv) connString(addr, extra string) string {
	host, port, _ := strings.Cut(addr, ":")
	return fmt.Sprintf("host=%s port=%s user=%s dbname=%s passfile=%s sslmode=disable %s",
		host, port, e.topo.Superuser, e.topo.Database, e.topo.PassFile, extra)
}

func (e *pgEnv) connect(addr, extra string) (*pgconn.PgConn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return pgconn.Connect(ctx, e.connString(addr, extra))
}

// where opens a session through the listener and returns the node it landed on (by the
// server's port) and whether that node is in recovery.
func (e *pgEnv) where(addr, extra string) (string, bool) {
	e.t.Helper()
	c, err := e.connect(addr, extra)
	if err != nil {
		e.t.Fatalf("connect %s %s: %v", addr, extra, err)
	}
	defer c.Close(context.Background())
	return e.nodeOf(c)
}

func (e *pgEnv) nodeOf(c *pgconn.PgConn) (string, bool) {
	e.t.Helper()
	v, err := tryQueryOne(c, "SELECT inet_server_port()::text || ' ' || pg_is_in_recovery()::text")
	if err != nil {
		e.t.Fatal(err)
	}
	port, rec, _ := strings.Cut(v, " ")
	for _, n := range e.topo.Nodes {
		if strconv.Itoa(n.Port) == port {
			return n.Name, rec == "true"
		}
	}
	e.t.Fatalf("no node has port %s", port)
	return "", false
}

func (e *pgEnv) exec(node, sql string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgconn.Connect(ctx, e.topo.ConnString(e.topo.Node(node), ""))
	if err != nil {
		e.t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, sql).ReadAll(); err != nil {
		e.t.Fatalf("%s on %s: %v", sql, node, err)
	}
}

func (e *pgEnv) status(node string) NodeStatus {
	for _, s := range e.l.Status() {
		if s.Name == node {
			return s
		}
	}
	e.t.Fatalf("no status for %s", node)
	return NodeStatus{}
}

// TestWithCluster runs the listener in front of a real cluster of a primary and two
// standbys (SCRAM authentication). Subtests share the cluster; the ones that change it
// (stopping a node, pausing replay, failover) come last.
func TestWithCluster(t *testing.T) {
	t.Parallel() // owns its cluster: its last subtests stop, pause and fail over nodes
	topo := clustertest.New(t, clustertest.Options{Standbys: 2})
	ctx := context.Background()

	t.Run("intent", func(t *testing.T) {
		e := startPG(t, topo, Config{ReadOnlyListen: "127.0.0.1:0", Routing: true, RoutingList: "('standby1','standby2')"})
		a := e.l.Addr().String()
		if n, rec := e.where(a, ""); n != "primary" || rec {
			t.Errorf("no intent: %s (in recovery %v)", n, rec)
		}
		for _, extra := range []string{"agbench.intent=read-only", "options='-c agbench.intent=read-only'"} {
			if n, rec := e.where(a, extra); n != "standby1" || !rec {
				t.Errorf("%s: %s (in recovery %v)", extra, n, rec)
			}
		}
		if n, rec := e.where(e.l.ReadOnlyAddr().String(), ""); n != "standby1" || !rec {
			t.Errorf("read-only port: %s (in recovery %v)", n, rec)
		}
		// Other options still reach the server.
		c, err := e.connect(a, "options='-c agbench.intent=read-only -c work_mem=3MB'")
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := tryQueryOne(c, "SHOW work_mem"); v != "3MB" {
			t.Errorf("work_mem through the listener = %q", v)
		}
		// A result far larger than the copy buffer and the socket buffers arrives whole.
		if v, err := tryQueryOne(c, "SELECT string_agg(md5(i::text), '') FROM generate_series(1, 300000) i"); err != nil || len(v) != 32*300000 {
			t.Errorf("large result: %d bytes, %v", len(v), err)
		}
		c.Close(ctx)
	})

	t.Run("load-balanced set spreads", func(t *testing.T) {
		e := startPG(t, topo, Config{Routing: true, RoutingList: "(('standby1','standby2'),'primary')"})
		count := map[string]int{}
		for i := 0; i < 6; i++ {
			n, _ := e.where(e.l.Addr().String(), "agbench.intent=read-only")
			count[n]++
		}
		if count["standby1"] != 3 || count["standby2"] != 3 {
			t.Fatalf("spread %v, want 3 and 3", count)
		}
	})

	t.Run("routing off", func(t *testing.T) {
		e := startPG(t, topo, Config{Routing: false})
		if n, _ := e.where(e.l.Addr().String(), "agbench.intent=read-only"); n != "primary" {
			t.Fatalf("routing off: %s", n)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		e := startPG(t, topo, Config{Routing: true, RoutingList: "('standby2')"})
		c, err := e.connect(e.l.Addr().String(), "agbench.intent=read-only")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		if n, _ := e.nodeOf(c); n != "standby2" {
			t.Fatalf("on %s", n)
		}
		res := make(chan error, 1)
		go func() {
			_, err := tryQueryOne(c, "SELECT pg_sleep(60)::text")
			res <- err
		}()
		e.waitActive(t, "standby2", "SELECT pg_sleep(60)")
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := c.CancelRequest(cctx); err != nil {
			t.Fatal(err)
		}
		var pe *pgconn.PgError
		if err := <-res; !errors.As(err, &pe) || pe.Code != "57014" {
			t.Fatalf("query ended with %v, want 57014 (canceled)", err)
		}
		if got := e.l.Counts().Cancels["forwarded"]; got != 1 {
			t.Fatalf("cancels forwarded %d", got)
		}
	})

	t.Run("tls", func(t *testing.T) {
		e := startPG(t, topo, Config{Routing: true, TLS: selfSigned(t), RequireTLS: true})
		c, err := e.connect(e.l.Addr().String(), "sslmode=require agbench.intent=read-only")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		if _, rec := e.nodeOf(c); !rec {
			t.Fatal("TLS read-only session not on a standby")
		}
		if _, err := e.connect(e.l.Addr().String(), "sslmode=disable"); err == nil {
			t.Fatal("plain session accepted with TLS required")
		}
	})

	t.Run("psql and pgbench", func(t *testing.T) {
		psql, err := exec.LookPath("psql")
		if err != nil {
			psql = topo.PG.Path("psql")
		}
		e := startPG(t, topo, Config{ReadOnlyListen: "127.0.0.1:0", Routing: true})
		out, err := exec.Command(psql, "-X", "-At", "-c", "SELECT pg_is_in_recovery()",
			e.connString(e.l.Addr().String(), "options='-c agbench.intent=read-only'")).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "t" {
			t.Fatalf("psql with read intent: %s %v", out, err)
		}
		pgbench := topo.PG.Path("pgbench")
		if _, err := os.Stat(pgbench); err != nil {
			pgbench = "pgbench"
		}
		run := func(addr string, args ...string) {
			t.Helper()
			host, port, _ := strings.Cut(addr, ":")
			cmd := exec.Command(pgbench, append([]string{"-h", host, "-p", port, "-U", topo.Superuser}, append(args, topo.Database)...)...)
			cmd.Env = append(os.Environ(), "PGPASSFILE="+topo.PassFile, "PGSSLMODE=disable")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("pgbench %v: %v\n%s", args, err, out)
			}
		}
		run(e.l.Addr().String(), "-i", "-q", "-s", "1")
		before := e.l.Counts().Sessions["read-only/standby1"] + e.l.Counts().Sessions["read-only/standby2"]
		topoWait(t, topo)
		run(e.l.ReadOnlyAddr().String(), "-S", "-M", "prepared", "-c", "4", "-t", "200", "-n")
		after := e.l.Counts().Sessions["read-only/standby1"] + e.l.Counts().Sessions["read-only/standby2"]
		if after-before < 4 {
			t.Fatalf("pgbench's sessions did not go to standbys: %v", e.l.Counts().Sessions)
		}
	})

	t.Run("kernel forwarding", func(t *testing.T) {
		e := startPG(t, topo, Config{Routing: true})
		if os.Geteuid() != 0 {
			t.Skipf("not root: forwarding is %s", e.l.Forwarding())
		}
		if e.l.Forwarding() != "kernel" {
			t.Fatalf("forwarding %q as root, want kernel", e.l.Forwarding())
		}
		c, err := e.connect(e.l.Addr().String(), "")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		if got := e.l.Counts().Forwarded["kernel"]; got != 1 {
			t.Fatalf("sessions forwarded in the kernel: %d, want 1 (%v)", got, e.l.Counts().Forwarded)
		}
		// A 60 MB result read by a client that stops after the first row until the
		// session's sockets hold still: the kernel holds back the backend (no unbounded
		// queue) and all of it arrives. Only this session's sockets count (the machine's TCP
		// memory is every process's: other tests' traffic moved it by more than this one).
		backendPort, err := tryQueryOne(c, "SELECT inet_server_port()::text")
		if err != nil {
			t.Fatal(err)
		}
		ports := []string{strconv.Itoa(e.l.Addr().(*net.TCPAddr).Port), backendPort}
		const rows, width = 60000, 1000
		rr := c.Exec(ctx, fmt.Sprintf(`SELECT repeat('x', %d) FROM generate_series(1, %d)`, width, rows))
		if !rr.NextResult() {
			t.Fatal(rr.Close())
		}
		res := rr.ResultReader()
		var n, total int
		for res.NextRow() {
			n++
			total += len(res.Values()[0])
			if n == 1 {
				queued := steadyQueuedBytes(t, ports)
				t.Logf("%.1f MB queued in the session's sockets while the client paused", float64(queued)/(1<<20))
				if queued > 48<<20 {
					t.Fatalf("%d MB queued in the session's sockets while the client paused: the kernel queued the result", queued>>20)
				}
			}
		}
		if _, err := res.Close(); err != nil || n != rows || total != rows*width {
			t.Fatalf("%d rows, %d bytes, %v", n, total, err)
		}
		rr.Close()
		// A FATAL error the backend sends as it ends the session reaches the client.
		pid, err := tryQueryOne(c, "SELECT pg_backend_pid()::text")
		if err != nil {
			t.Fatal(err)
		}
		node, _ := e.nodeOf(c)
		e.exec(node, "SELECT pg_terminate_backend("+pid+")")
		_, err = c.Exec(ctx, "SELECT 1").ReadAll()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "57P01" {
			t.Fatalf("after pg_terminate_backend: %v, want the server's FATAL 57P01", err)
		}
	})

	t.Run("fallback refusal and return", func(t *testing.T) {
		fall := startPG(t, topo, Config{Routing: true, RoutingList: "('standby1','primary')"})
		refuse := startPG(t, topo, Config{Routing: true, RoutingList: "('standby1')"})
		if err := topo.StopNode(ctx, "standby1"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "standby1 down", func() bool { return !fall.status("standby1").Up && !refuse.status("standby1").Up })
		if n, rec := fall.where(fall.l.Addr().String(), "agbench.intent=read-only"); n != "primary" || rec {
			t.Errorf("fallback: %s", n)
		}
		_, err := refuse.connect(refuse.l.Addr().String(), "agbench.intent=read-only")
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "08004" || !strings.Contains(pe.Message, "('standby1')") {
			t.Errorf("refusal: %v", err)
		}
		if err := topo.StartNode(ctx, "standby1"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "standby1 back", func() bool { return fall.status("standby1").Up })
		if n, _ := fall.where(fall.l.Addr().String(), "agbench.intent=read-only"); n != "standby1" {
			t.Errorf("after standby1 returned: %s", n)
		}
	})

	t.Run("max-lag skips a paused standby", func(t *testing.T) {
		e := startPG(t, topo, Config{Routing: true, RoutingList: "('standby1','standby2')", MaxLag: time.Second})
		e.exec("standby1", "SELECT pg_wal_replay_pause()")
		defer e.exec("standby1", "SELECT pg_wal_replay_resume()")
		e.exec("primary", "CREATE TABLE IF NOT EXISTS lagtest (i int)")
		waitFor(t, "standby1 lag over 1s", func() bool {
			e.exec("primary", "INSERT INTO lagtest VALUES (1)")
			return lagOver(e.status("standby1"), 1)
		})
		if !e.status("standby1").ReplayPaused {
			t.Error("status does not show replay paused")
		}
		if n, _ := e.where(e.l.Addr().String(), "agbench.intent=read-only"); n != "standby2" {
			t.Fatalf("with standby1 lagging: %s", n)
		}
		e.exec("standby1", "SELECT pg_wal_replay_resume()")
		waitFor(t, "standby1 caught up", func() bool { s := e.status("standby1"); return s.LagSeconds != nil && *s.LagSeconds < 1 })
		if n, _ := e.where(e.l.Addr().String(), "agbench.intent=read-only"); n != "standby1" {
			t.Fatalf("after resume: %s", n)
		}
	})

	t.Run("failover", func(t *testing.T) {
		e := startPG(t, topo, Config{Routing: true})
		old, err := e.connect(e.l.Addr().String(), "")
		if err != nil {
			t.Fatal(err)
		}
		defer old.Close(ctx)
		if n, _ := e.nodeOf(old); n != "primary" {
			t.Fatalf("before failover on %s", n)
		}
		ro, err := e.connect(e.l.Addr().String(), "agbench.intent=read-only")
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close(ctx)
		if n, _ := e.nodeOf(ro); n != "standby1" {
			t.Fatalf("read intent before failover on %s, want standby1 (the set's first)", n)
		}
		fctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		defer cancel()
		if _, err := topo.Failover(fctx, cluster.FailoverOptions{To: "standby1"}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the listener to see standby1 as primary", func() bool { return e.status("standby1").Role == "primary" })
		if _, err := tryQueryOne(old, "SELECT 1::text"); err == nil {
			t.Error("the session on the old primary still works")
		}
		// The read-intent session on the promoted standby is ended too.
		waitFor(t, "the read-intent session on standby1 ended", func() bool { _, err := tryQueryOne(ro, "SELECT 1::text"); return err != nil })
		if n, rec := e.where(e.l.Addr().String(), ""); n != "standby1" || rec {
			t.Errorf("read-write after failover: %s (in recovery %v)", n, rec)
		}
		waitFor(t, "the old primary back as a standby", func() bool { return e.status("primary").Role == "standby" })
		seen := map[string]bool{}
		for i := 0; i < 4; i++ {
			n, rec := e.where(e.l.Addr().String(), "agbench.intent=read-only")
			if !rec {
				t.Errorf("read intent after failover on %s, not in recovery", n)
			}
			seen[n] = true
		}
		if !seen["primary"] || !seen["standby2"] {
			t.Errorf("read intent after failover went to %v, want the old primary and standby2", seen)
		}
	})
}

// waitActive waits until a query is running on the node.
func (e *pgEnv) waitActive(t *testing.T, node, query string) {
	t.Helper()
	ctx := context.Background()
	c, err := pgconn.Connect(ctx, e.topo.ConnString(e.topo.Node(node), ""))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	waitFor(t, "the query to run on "+node, func() bool {
		v, err := tryQueryOne(c, "SELECT count(*)::text FROM pg_stat_activity WHERE state = 'active' AND query LIKE '"+query+"%'")
		return err == nil && v == "1"
	})
}

func topoWait(t *testing.T, topo *cluster.Topology) {
	t.Helper()
	if err := topo.WaitCaughtUp(context.Background(), time.Minute); err != nil {
		t.Fatal(err)
	}
}

// TestPromotionWhileOldPrimaryRuns promotes the standby with pg_ctl promote and leaves the old
// primary running (a split brain): the listener must take the promoted node for the primary,
// keep the old one out of routing, and end the sessions that are still writing into it.
func TestPromotionWhileOldPrimaryRuns(t *testing.T) {
	t.Parallel() // owns its cluster: it promotes the standby
	topo := clustertest.New(t, clustertest.Options{Standbys: 1})
	e := startPG(t, topo, Config{Routing: true})
	ctx := context.Background()
	old, err := e.connect(e.l.Addr().String(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close(ctx)
	if n, _ := e.nodeOf(old); n != "primary" {
		t.Fatalf("before promotion on %s", n)
	}
	ro, err := e.connect(e.l.Addr().String(), "agbench.intent=read-only")
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close(ctx)
	if n, rec := e.nodeOf(ro); n != "standby1" || !rec {
		t.Fatalf("read intent before promotion on %s (in recovery %v)", n, rec)
	}
	s := topo.Node("standby1")
	pctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if out, err := topo.OSUser.Command(pctx, topo.PG.Path("pg_ctl"), "promote", "-w", "-D", s.DataDir).CombinedOutput(); err != nil {
		t.Fatalf("pg_ctl promote: %v\n%s", err, out)
	}
	waitFor(t, "standby1 taken for the primary", func() bool { return e.status("standby1").Role == "primary" })
	if st := e.status("primary"); st.Role != "stale-primary" || !strings.Contains(st.Conflict, "newest timeline (primary 1, standby1 2)") {
		t.Errorf("the old primary's role is %q (%s), want stale-primary on the older timeline", st.Role, st.Conflict)
	}
	// The new roles are published before the sessions of the lost one are ended (outside
	// the status lock), so the old primary's session is seen to end, not expected ended.
	waitFor(t, "the session on the old primary ended", func() bool { _, err := tryQueryOne(old, "SELECT 1::text"); return err != nil })
	// The read-intent session routed to standby1 as a standby does not go on
	// on what is now the primary: it is ended, and its client routed again.
	waitFor(t, "the read-intent session on standby1 ended", func() bool { _, err := tryQueryOne(ro, "SELECT 1::text"); return err != nil })
	if n, rec := e.where(e.l.Addr().String(), ""); n != "standby1" || rec {
		t.Errorf("read-write after promotion: %s (in recovery %v)", n, rec)
	}
	// The old primary is neither a standby nor the primary: read intent has nowhere to go
	// but the new primary, which the default list names last. Such a session, routed to
	// standby1 as the primary, is left alone by later probes.
	ro2, err := e.connect(e.l.Addr().String(), "agbench.intent=read-only")
	if err != nil {
		t.Fatal(err)
	}
	defer ro2.Close(ctx)
	if n, rec := e.nodeOf(ro2); n != "standby1" || rec {
		t.Errorf("read intent after promotion: %s (in recovery %v)", n, rec)
	}
	seen := e.status("standby1").ProbedAt
	waitFor(t, "two more probes of standby1", func() bool { return e.status("standby1").ProbedAt.After(seen.Add(e.l.cfg.ProbeInterval)) })
	if _, err := tryQueryOne(ro2, "SELECT 1::text"); err != nil {
		t.Errorf("the read-intent session routed to the new primary was ended: %v", err)
	}
}

// steadyQueuedBytes waits until the bytes queued in the TCP sockets on the given loopback
// ports (sent and not acknowledged, or received and not read) hold still and are not zero
// (the backend has filled every buffer on the way and waits), and returns them.
func steadyQueuedBytes(t *testing.T, ports []string) int {
	t.Helper()
	last := -1
	for deadline := time.Now().Add(time.Minute); ; {
		time.Sleep(200 * time.Millisecond)
		q := queuedBytes(t, ports)
		if q > 0 && q == last {
			return q
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session's sockets did not hold still within a minute (%d bytes queued)", q)
		}
		last = q
	}
}

// queuedBytes sums tx_queue and rx_queue of /proc/net/tcp{,6}'s connections whose local or
// remote port is one of ports (decimal).
func queuedBytes(t *testing.T, ports []string) int {
	t.Helper()
	want := map[string]bool{}
	for _, p := range ports {
		n, err := strconv.Atoi(p)
		if err != nil {
			t.Fatalf("port %q", p)
		}
		want[fmt.Sprintf("%04X", n)] = true
	}
	sum := 0
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(file)
		if err != nil && file == "/proc/net/tcp" {
			t.Skipf("no %s: %v", file, err)
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 5 || f[3] == "0A" { // a listening socket's queue is its backlog
				continue
			}
			_, local, _ := strings.Cut(f[1], ":")
			_, remote, _ := strings.Cut(f[2], ":")
			if !want[local] && !want[remote] {
				continue
			}
			tx, rx, _ := strings.Cut(f[4], ":")
			for _, h := range []string{tx, rx} {
				v, err := strconv.ParseInt(h, 16, 64)
				if err != nil {
					t.Fatalf("%s: queue %q in %q", file, h, line)
				}
				sum += int(v)
			}
		}
	}
	return sum
}
