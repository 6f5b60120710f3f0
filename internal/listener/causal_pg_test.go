package listener

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/routing"
)

// causalWriter writes rows on the primary and reads them through the listener.
type causalWriter struct {
	e  *pgEnv
	w  *pgconn.PgConn
	id int
}

func newCausalWriter(e *pgEnv, table string) *causalWriter {
	e.t.Helper()
	e.exec("primary", "CREATE TABLE IF NOT EXISTS "+table+" (i int PRIMARY KEY)")
	w, err := e.connect(e.l.backend("primary").Addr, "")
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { w.Close(context.Background()) })
	return &causalWriter{e: e, w: w}
}

// write commits one row and returns its id and the primary's WAL position after the
// commit.
func (c *causalWriter) write(table string) (int, string) {
	c.e.t.Helper()
	c.id++
	if _, err := tryQueryOne(c.w, fmt.Sprintf("INSERT INTO %s VALUES (%d) RETURNING i", table, c.id)); err != nil {
		c.e.t.Fatal(err)
	}
	lsn, err := tryQueryOne(c.w, "SELECT pg_current_wal_insert_lsn()::text")
	if err != nil {
		c.e.t.Fatal(err)
	}
	return c.id, lsn
}

// read opens a session through the listener with extra keywords and says where it went
// and whether it saw row id; a session the listener refused comes back as the error.
func (c *causalWriter) read(table string, id int, extra string) (node string, saw bool, err error) {
	c.e.t.Helper()
	s, err := c.e.connect(c.e.l.Addr().String(), extra)
	if err != nil {
		return "", false, err
	}
	defer s.Close(context.Background())
	node, _ = c.e.nodeOf(s)
	v, err := tryQueryOne(s, fmt.Sprintf("SELECT count(*) FROM %s WHERE i = %d", table, id))
	if err != nil {
		c.e.t.Fatal(err)
	}
	return node, v == "1", nil
}

func setApplyDelay(e *pgEnv, node, delay string) {
	e.t.Helper()
	e.exec(node, "ALTER SYSTEM SET recovery_min_apply_delay = '"+delay+"'")
	e.exec(node, "SELECT pg_reload_conf()")
}

// Read-your-writes through the listener on a real primary and standby while
// the standby's replay is slowed.
func TestCausalRoutingWithCluster(t *testing.T) {
	t.Parallel() // owns its cluster: it pauses the standby's replay
	topo := clustertest.New(t, clustertest.Options{Standbys: 1})

	t.Run("min_lsn sees the write on every try", func(t *testing.T) {
		// A long causal wait: every session waits for standby1 rather than falling back.
		e := startPG(t, topo, Config{Routing: true, RoutingList: "('standby1','primary')", CausalWait: 30 * time.Second})
		cw := newCausalWriter(e, "causal1")
		setApplyDelay(e, "standby1", "10ms")
		defer setApplyDelay(e, "standby1", "0")
		// Another session writes all along, so the primary's insert position runs ahead of
		// the position it has written: a min_lsn read from pg_current_wal_insert_lsn() is
		// never taken for one beyond the primary's WAL.
		bg, err := e.connect(e.l.backend("primary").Addr, "")
		if err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		bgDone := make(chan error, 1)
		go func() {
			defer bg.Close(context.Background())
			for {
				select {
				case <-stop:
					bgDone <- nil
					return
				default:
				}
				if _, err := bg.Exec(context.Background(), "INSERT INTO causal1 SELECT -g FROM generate_series(1, 50) g ON CONFLICT DO NOTHING; DELETE FROM causal1 WHERE i < 0").ReadAll(); err != nil {
					bgDone <- err
					return
				}
			}
		}()
		defer func() {
			close(stop)
			if err := <-bgDone; err != nil {
				t.Errorf("background writer: %v", err)
			}
		}()
		const tries = 1000
		for i := 0; i < tries; i++ {
			id, lsn := cw.write("causal1")
			node, saw, err := cw.read("causal1", id, "options='-c agbench.intent=read-only -c agbench.min_lsn="+lsn+"'")
			if err != nil || !saw || node != "standby1" {
				t.Fatalf("try %d: min_lsn %s: on %s, saw the write %v, %v", i, lsn, node, saw, err)
			}
		}
		c := e.l.Counts()
		if c.Causal["standby1/immediate"]+c.Causal["standby1/waited"] != tries || c.CausalWaits["standby1/caught_up"] == 0 {
			t.Fatalf("counts: causal %v waits %v", c.Causal, c.CausalWaits)
		}
		t.Logf("causal %v waits %v wait seconds %v", c.Causal, c.CausalWaits, c.CausalWaitSeconds)
	})

	t.Run("without min_lsn some reads are stale", func(t *testing.T) {
		e := startPG(t, topo, Config{Routing: true, RoutingList: "('standby1','primary')"})
		cw := newCausalWriter(e, "causal2")
		setApplyDelay(e, "standby1", "500ms")
		defer setApplyDelay(e, "standby1", "0")
		stale := 0
		for i := 0; i < 20; i++ {
			id, _ := cw.write("causal2")
			node, saw, err := cw.read("causal2", id, "agbench.intent=read-only")
			if err != nil || node != "standby1" {
				t.Fatalf("try %d: on %s, %v", i, node, err)
			}
			if !saw {
				stale++
			}
		}
		if stale == 0 {
			t.Fatal("no read missed its write with replay 500 ms behind")
		}
		t.Logf("%d of 20 reads missed the write", stale)
	})

	t.Run("session consistency sees the write", func(t *testing.T) {
		e := startPG(t, topo, Config{Routing: true, RoutingList: "('standby1','primary')", Consistency: Session, CausalWait: 30 * time.Second})
		cw := newCausalWriter(e, "causal3")
		setApplyDelay(e, "standby1", "10ms")
		defer setApplyDelay(e, "standby1", "0")
		for i := 0; i < 100; i++ {
			id, _ := cw.write("causal3")
			node, saw, err := cw.read("causal3", id, "agbench.intent=read-only")
			if err != nil || !saw || node != "standby1" {
				t.Fatalf("try %d: on %s, saw the write %v, %v", i, node, saw, err)
			}
		}
		// A session may opt out: then some of its reads miss the write.
		setApplyDelay(e, "standby1", "500ms")
		stale := 0
		for i := 0; i < 20 && stale == 0; i++ {
			id, _ := cw.write("causal3")
			node, saw, err := cw.read("causal3", id, "options='-c agbench.intent=read-only -c agbench.consistency=eventual'")
			if err != nil || node != "standby1" {
				t.Fatalf("eventual session: on %s, %v", node, err)
			}
			if !saw {
				stale++
			}
		}
		if stale == 0 {
			t.Fatal("agbench.consistency=eventual: no read missed its write with replay 500 ms behind")
		}
	})

	t.Run("a standby that cannot catch up is skipped per the routing list", func(t *testing.T) {
		e := startPG(t, topo, Config{Routing: true, RoutingList: "('standby1','primary')", CausalWait: 50 * time.Millisecond, Metrics: "127.0.0.1:0"})
		cw := newCausalWriter(e, "causal4")
		e.exec("standby1", "SELECT pg_wal_replay_pause()")
		defer e.exec("standby1", "SELECT pg_wal_replay_resume()")
		id, lsn := cw.write("causal4")
		node, saw, err := cw.read("causal4", id, "options='-c agbench.intent=read-only -c agbench.min_lsn="+lsn+"'")
		if err != nil || node != "primary" || !saw {
			t.Fatalf("paused standby1: on %s, saw %v, %v", node, saw, err)
		}
		c := e.l.Counts()
		if c.Fallbacks["standby1"] != 1 || c.CausalWaits["standby1/timed_out"] != 1 || c.Causal["primary/waited"] != 1 {
			t.Fatalf("counts: fallbacks %v waits %v causal %v", c.Fallbacks, c.CausalWaits, c.Causal)
		}
		var prom strings.Builder
		e.l.writeProm(&prom)
		for _, want := range []string{`agbench_listener_causal_fallbacks_total{node="standby1"} 1`,
			`agbench_listener_causal_waits_total{node="standby1",result="timed_out"} 1`,
			`agbench_listener_causal_sessions_total{node="primary",how="waited"} 1`,
			`agbench_listener_causal_wait_seconds_bucket{node="standby1",le="0.01"} 0`,
			`agbench_listener_causal_wait_seconds_bucket{node="standby1",le="+Inf"} 1`,
			`agbench_listener_causal_wait_seconds_count{node="standby1"} 1`} {
			if !strings.Contains(prom.String(), want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
		// The redirect path does the same.
		v, err := cluster.ParseLSN(lsn)
		if err != nil {
			t.Fatal(err)
		}
		a, err := ResolveRequest(context.Background(), e.l.MetricsAddr().String(), RouteRequest{Intent: ReadOnly, MinLSN: v})
		if err != nil || a.Node != "primary" {
			t.Fatalf("redirect with min_lsn: %+v, %v", a, err)
		}
		if a, err := ResolveRequest(context.Background(), e.l.MetricsAddr().String(), RouteRequest{Intent: ReadOnly}); err != nil || a.Node != "standby1" {
			t.Fatalf("redirect without min_lsn: %+v, %v", a, err)
		}

		// Without the primary in the list, a clear refusal naming the position.
		only := startPG(t, topo, Config{Routing: true, RoutingList: "('standby1')", CausalWait: 50 * time.Millisecond, Metrics: "127.0.0.1:0"})
		_, err = only.connect(only.l.Addr().String(), "options='-c agbench.intent=read-only -c agbench.min_lsn="+lsn+"'")
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != codeRejected || !strings.Contains(pe.Message, "standby1: behind: replayed") || !strings.Contains(pe.Hint, "--causal-wait") {
			t.Fatalf("only standby1 listed, paused: %v", err)
		}
		if f := only.l.Counts().Failures["causal_no_target/read-only"]; f != 1 {
			t.Fatalf("failures %v", only.l.Counts().Failures)
		}
		_, err = ResolveRequest(context.Background(), only.l.MetricsAddr().String(), RouteRequest{Intent: ReadOnly, MinLSN: v})
		var re *ResolveError
		if !errors.As(err, &re) || re.Status != 503 || !strings.Contains(re.Msg, "behind") {
			t.Fatalf("redirect, only standby1 listed: %v", err)
		}
		// Sessions without min_lsn still go to standby1.
		if n, _ := only.where(only.l.Addr().String(), "agbench.intent=read-only"); n != "standby1" {
			t.Fatalf("without min_lsn: %s", n)
		}
	})

	t.Run("bad and future min_lsn are refused", func(t *testing.T) {
		e := startPG(t, topo, Config{Routing: true, RoutingList: "('standby1','primary')", Metrics: "127.0.0.1:0"})
		var pe *pgconn.PgError
		_, err := e.connect(e.l.Addr().String(), "options='-c agbench.intent=read-only -c agbench.min_lsn=banana'")
		if !errors.As(err, &pe) || pe.Code != codeInvalidTextRepr || !strings.Contains(pe.Message, routing.MinLSNParam) {
			t.Fatalf("malformed min_lsn: %v", err)
		}
		_, err = e.connect(e.l.Addr().String(), "options='-c agbench.intent=read-only -c agbench.min_lsn=FFFFFFFF/0'")
		if !errors.As(err, &pe) || pe.Code != codeRejected || !strings.Contains(pe.Message, "beyond the primary's WAL") {
			t.Fatalf("future min_lsn: %v", err)
		}
		if e.l.Counts().Failures["causal_future_lsn/read-only"] != 1 {
			t.Fatalf("failures %v", e.l.Counts().Failures)
		}
		_, err = ResolveRequest(context.Background(), e.l.MetricsAddr().String(), RouteRequest{Intent: ReadOnly, MinLSN: 0xFFFFFFFF00000000})
		var re *ResolveError
		if !errors.As(err, &re) || re.Status != 400 || !strings.Contains(re.Msg, "beyond the primary's WAL") {
			t.Fatalf("redirect, future min_lsn: %v", err)
		}
		for q, want := range map[string]string{"min_lsn=zz": "min_lsn: bad LSN", "consistency=strong": `consistency "strong"`} {
			resp, err := http.Get("http://" + e.l.MetricsAddr().String() + "/route?intent=read-only&" + q)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), want) {
				t.Errorf("/route?%s: %d %s", q, resp.StatusCode, body)
			}
		}
		// Read-write sessions are not held to min_lsn: the primary has all it wrote.
		if n, _ := e.where(e.l.Addr().String(), "agbench.min_lsn=0/1"); n != "primary" {
			t.Fatalf("read-write with min_lsn: %s", n)
		}
		if _, _, err := e.l.RouteCausal(routing.ReadOnly, 1, Eventual); err != nil {
			t.Fatalf("min_lsn 0/1: %v", err)
		}
	})
}
