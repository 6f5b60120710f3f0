package listener

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// A backend that refuses a session at startup (57P03 shutting down, 53300 too many
// connections) makes the session move on to the next candidate of the routing list,
// the rest of its load-balanced set first and the primary last; the node stays out of
// routing until its next good probe; with no candidate left the client gets the last
// backend's own error. TLS clients are retried the same way.
func TestFakeRefusalAtStartupTriesNextCandidate(t *testing.T) {
	p, s1, s2 := startFakePG(t, "primary", false), startFakePG(t, "standby1", true), startFakePG(t, "standby2", true)
	var events []Event
	evc := make(chan Event, 100)
	// Probes too rare to clear a refusal by themselves: the test probes by hand.
	l := startFake(t, Config{Routing: true, RoutingList: "(('standby1','standby2'),'primary')", ProbeInterval: time.Hour,
		Metrics: "127.0.0.1:0", TLS: selfSigned(t), OnEvent: func(e Event) { evc <- e }}, p, s1, s2)
	ro := func(extra string) (string, error) {
		c, err := tryConnect(l.Addr().String(), "agbench.intent=read-only "+extra)
		if err != nil {
			return "", err
		}
		defer c.Close(context.Background())
		return tryQueryOne(c, "SELECT node")
	}
	s1.refuseWith(codeCannotConnectNow, "the database system is shutting down")
	for i, extra := range []string{"", "", "sslmode=require", ""} {
		if got, err := ro(extra); err != nil || got != "standby2" {
			t.Fatalf("session %d (%s) with standby1 shutting down: %q, %v", i, extra, got, err)
		}
	}
	if n := s1.refused.Load(); n != 1 {
		t.Errorf("standby1 refused %d sessions, want 1 (then out of routing until its next probe)", n)
	}
	if st := l.Status()[1]; !st.Up || st.Role != "standby" || !strings.Contains(st.Refusing, "shutting down (57P03)") {
		t.Errorf("standby1 status %+v", st)
	}

	s2.refuseWith(codeTooManyConns, "sorry, too many clients already")
	if got, err := ro(""); err != nil || got != "primary" {
		t.Fatalf("with both standbys refusing: %q, %v; want the primary, listed last", got, err)
	}
	p.refuseWith(codeTooManyConns, "sorry, too many clients already")
	_, err := tryConnect(l.Addr().String(), "")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != codeTooManyConns || pe.Message != "sorry, too many clients already" {
		t.Fatalf("read-write with the primary full: %v, want the primary's own 53300", err)
	}
	_, err = tryConnect(l.Addr().String(), "")
	if !errors.As(err, &pe) || pe.Code != codeRejected || !strings.Contains(pe.Message, "primary: refused a session since its last probe (sorry, too many clients already (53300))") {
		t.Fatalf("read-write while the primary is out of routing: %v", err)
	}

	gauges := httpGet(t, "http://"+l.MetricsAddr().String()+"/metrics")
	for _, want := range []string{`agbench_listener_backend_refusing{node="standby2"} 1`, `agbench_listener_backend_refusing{node="primary"} 1`} {
		if !strings.Contains(gauges, want) {
			t.Errorf("metrics lack %s", want)
		}
	}

	// The next good probe brings the nodes back; standby1 has stopped refusing.
	s1.refuse.Store(nil)
	p.refuse.Store(nil)
	l.health.round(context.Background())
	if got, err := ro(""); err != nil || got != "standby1" {
		t.Fatalf("after the probe: %q, %v; want standby1 back", got, err)
	}

	c := l.Counts()
	if r := c.Retries; r["standby1/cannot_connect_now"] != 1 || r["standby2/too_many_connections"] != 1 || r["primary/too_many_connections"] != 1 || len(r) != 3 {
		t.Errorf("retries %v", r)
	}
	if f := c.Failures; f["backend_refused/read-write"] != 1 || f["no_target/read-write"] != 1 {
		t.Errorf("failures %v", f)
	}
	if s := c.Sessions; s["read-only/standby2"] != 4 || s["read-only/primary"] != 1 || s["read-only/standby1"] != 1 {
		t.Errorf("sessions %v", s)
	}
	body := httpGet(t, "http://"+l.MetricsAddr().String()+"/metrics")
	for _, want := range []string{
		`agbench_listener_startup_retries_total{node="standby1",reason="cannot_connect_now"} 1`,
		`agbench_listener_startup_retries_total{node="standby2",reason="too_many_connections"} 1`,
		`agbench_listener_session_failures_total{reason="backend_refused",intent="read-write"} 1`,
		`agbench_listener_backend_refusing{node="standby1"} 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	for len(evc) > 0 {
		events = append(events, <-evc)
	}
	var retries int
	for _, e := range events {
		if e.Kind == "retry" {
			retries++
		}
	}
	if retries != 3 {
		t.Errorf("%d retry events, want 3: %v", retries, events)
	}
}

// A backend that accepts the connection but closes it without answering the startup
// message is retried like one that refuses the connection.
func TestFakeSilentBackendIsRetried(t *testing.T) {
	p, s2 := startFakePG(t, "primary", false), startFakePG(t, "standby2", true)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = io.ReadFull(c, make([]byte, 8))
			c.Close()
		}
	}()
	// The silent node's probe goes to standby2's fake: the listener takes it for a
	// healthy standby, and only the session finds it silent.
	silent := Backend{Name: "standby1", Addr: ln.Addr().String(), ProbeConnString: "postgres://probe@" + s2.addr() + "/postgres?sslmode=disable"}
	l := startFake(t, Config{Routing: true, RoutingList: "('standby1','standby2')", ProbeInterval: time.Hour,
		Backends: []Backend{silent}}, p, s2)
	if got := queryOne(t, connect(t, l.Addr().String(), "agbench.intent=read-only"), "SELECT node"); got != "standby2" {
		t.Fatalf("got %s, want standby2", got)
	}
	if r := l.Counts().Retries; r["standby1/connect_failed"] != 1 {
		t.Fatalf("retries %v", r)
	}
	if st := l.Status()[0]; !strings.Contains(st.Refusing, "no answer to the startup message") {
		t.Fatalf("standby1 status %+v", st)
	}
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
