package listener

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/routing"
)

func connect(t *testing.T, addr string, extra string) *pgconn.PgConn {
	t.Helper()
	c, err := tryConnect(addr, extra)
	if err != nil {
		t.Fatalf("connect to %s (%s): %v", addr, extra, err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func tryConnect(addr, extra string) (*pgconn.PgConn, error) {
	host, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return pgconn.Connect(ctx, "host="+host+" port="+port+" user=app dbname=app sslmode=disable "+extra)
}

func queryOne(t *testing.T, c *pgconn.PgConn, sql string) string {
	t.Helper()
	v, err := tryQueryOne(c, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

func tryQueryOne(c *pgconn.PgConn, sql string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rs, err := c.Exec(ctx, sql).ReadAll()
	if err != nil {
		return "", err
	}
	if len(rs) != 1 || len(rs[0].Rows) != 1 {
		return "", errors.New("not one row")
	}
	return string(rs[0].Rows[0][0]), nil
}

func TestFakeRoutesByIntent(t *testing.T) {
	p, s1, s2 := startFakePG(t, "primary", false), startFakePG(t, "standby1", true), startFakePG(t, "standby2", true)
	l := startFake(t, Config{ReadOnlyListen: "127.0.0.1:0", Routing: true, RoutingList: "('standby1','standby2')"}, p, s1, s2)
	addr := l.Addr().String()
	if got := queryOne(t, connect(t, addr, ""), "SELECT node"); got != "primary" {
		t.Fatalf("no intent went to %s", got)
	}
	if got := queryOne(t, connect(t, addr, "agbench.intent=read-only"), "SELECT node"); got != "standby1" {
		t.Fatalf("startup parameter went to %s", got)
	}
	if _, ok := s1.lastStartup()[routing.IntentParam]; ok {
		t.Fatal("the listener forwarded its own parameter")
	}
	c := connect(t, addr, "options='-c agbench.intent=read-only -c work_mem=1MB'")
	if got := queryOne(t, c, "SELECT node"); got != "standby1" {
		t.Fatalf("options went to %s", got)
	}
	if o := s1.lastStartup()["options"]; o != "-c work_mem=1MB" {
		t.Fatalf("forwarded options %q", o)
	}
	if got := queryOne(t, connect(t, l.ReadOnlyAddr().String(), ""), "SELECT node"); got != "standby1" {
		t.Fatalf("read-only port went to %s", got)
	}
	cn := l.Counts()
	if cn.Sessions["read-only/standby1"] != 3 || cn.Sessions["read-write/primary"] != 1 {
		t.Fatalf("counts %v", cn.Sessions)
	}
	_, err := tryConnect(addr, "agbench.intent=sometimes")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != codeInvalidParamValue {
		t.Fatalf("bad intent: %v", err)
	}
}

func TestFakeRefusalNamesList(t *testing.T) {
	p, s1 := startFakePG(t, "primary", false), startFakePG(t, "standby1", true)
	l := startFake(t, Config{Routing: true, RoutingList: "(('standby1'))"}, p, s1)
	s1.stop()
	waitFor(t, "standby1 down", func() bool { return !l.Status()[1].Up })
	_, err := tryConnect(l.Addr().String(), "agbench.intent=read-only")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != codeRejected || !strings.Contains(pe.Message, "('standby1')") ||
		!strings.Contains(pe.Message, "primary: primary, not listed") {
		t.Fatalf("refusal: %v", err)
	}
	if got := queryOne(t, connect(t, l.Addr().String(), ""), "SELECT node"); got != "primary" {
		t.Fatalf("writes went to %s", got)
	}
	if l.Counts().Failures["no_target/read-only"] != 1 {
		t.Fatalf("failures %v", l.Counts().Failures)
	}
}

func TestFakeRoutingOff(t *testing.T) {
	p, s1 := startFakePG(t, "primary", false), startFakePG(t, "standby1", true)
	l := startFake(t, Config{Routing: false, RoutingList: "('standby1')"}, p, s1)
	if got := queryOne(t, connect(t, l.Addr().String(), "agbench.intent=read-only"), "SELECT node"); got != "primary" {
		t.Fatalf("routing off sent read intent to %s", got)
	}
}

func TestFakeMaxLagSkipsLaggingStandby(t *testing.T) {
	p, s1, s2 := startFakePG(t, "primary", false), startFakePG(t, "standby1", true), startFakePG(t, "standby2", true)
	l := startFake(t, Config{Routing: true, RoutingList: "('standby1','standby2')", MaxLag: 300 * time.Millisecond}, p, s1, s2)
	// standby1 stops replaying; the primary and standby2 move on.
	for i := 0; i < 10; i++ {
		p.lsn.Add(100)
		s2.lsn.Add(100)
		time.Sleep(60 * time.Millisecond)
	}
	waitFor(t, "standby1 lag over the limit", func() bool { return lagOver(l.Status()[1], 0.3) })
	if got := queryOne(t, connect(t, l.Addr().String(), "agbench.intent=read-only"), "SELECT node"); got != "standby2" {
		t.Fatalf("got %s, want standby2", got)
	}
	s1.lsn.Store(p.lsn.Load())
	waitFor(t, "standby1 caught up", func() bool { s := l.Status()[1]; return s.LagSeconds != nil && *s.LagSeconds == 0 })
	if got := queryOne(t, connect(t, l.Addr().String(), "agbench.intent=read-only"), "SELECT node"); got != "standby1" {
		t.Fatalf("got %s after catching up, want standby1", got)
	}
}

func TestFakeBadStartupDoesNotHurtOthers(t *testing.T) {
	p := startFakePG(t, "primary", false)
	l := startFake(t, Config{StartupTimeout: 300 * time.Millisecond}, p)
	good := connect(t, l.Addr().String(), "")
	for _, junk := range [][]byte{
		{0, 0, 0, 4},                     // length too small
		{0x7f, 0xff, 0xff, 0xff, 1, 2},   // huge length
		{0, 0, 0, 8, 0, 2, 0, 0},         // protocol 2.0
		[]byte("GET / HTTP/1.1\r\n\r\n"), // not PostgreSQL at all
	} {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write(junk)
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		b, _ := io.ReadAll(c)
		c.Close()
		if len(b) == 0 || b[0] != 'E' || !bytes.Contains(b, []byte(codeProtocolViolation)) {
			t.Errorf("junk %q: answer %q, want an ErrorResponse %s", junk, b, codeProtocolViolation)
		}
	}
	// A client that says nothing, and one that stops halfway, are cut by the startup timeout.
	for _, partial := range [][]byte{nil, {0, 0, 0, 40, 0, 3}} {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write(partial)
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		b, err := io.ReadAll(c)
		c.Close()
		if err != nil || !bytes.Contains(b, []byte("startup timeout")) {
			t.Errorf("silent client: %q %v", b, err)
		}
	}
	if got := queryOne(t, good, "SELECT node"); got != "primary" {
		t.Fatalf("the good session broke: %s", got)
	}
	f := l.Counts().Failures
	if f["bad_startup/"] != 4 || f["startup_timeout/"] != 2 {
		t.Fatalf("failures %v", f)
	}
}

func TestFakeCancelReachesTheRightBackend(t *testing.T) {
	p, s1 := startFakePG(t, "primary", false), startFakePG(t, "standby1", true)
	l := startFake(t, Config{Routing: true}, p, s1)
	// Both fakes hand out the same PIDs; only the secret tells the sessions apart.
	cw := connect(t, l.Addr().String(), "")
	cr := connect(t, l.Addr().String(), "agbench.intent=read-only")
	if cw.PID() != cr.PID() {
		t.Fatalf("fakes should share PIDs: %d %d", cw.PID(), cr.PID())
	}
	res := make(chan error, 1)
	go func() {
		_, err := tryQueryOne(cr, "SELECT pg_sleep(30)")
		res <- err
	}()
	waitFor(t, "the sleep to start", func() bool {
		s1.mu.Lock()
		defer s1.mu.Unlock()
		return len(s1.sleepers) == 1
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cr.CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	err := <-res
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" {
		t.Fatalf("sleep ended with %v, want 57014", err)
	}
	if s1.cancelCount() != 1 || p.cancelCount() != 0 {
		t.Fatalf("cancels: standby1 %d, primary %d", s1.cancelCount(), p.cancelCount())
	}
	// An unknown key goes nowhere.
	c, _ := net.Dial("tcp", l.Addr().String())
	_, _ = c.Write(encode(t, &pgproto3.CancelRequest{ProcessID: 1, SecretKey: []byte("nope")}))
	_, _ = io.ReadAll(c)
	c.Close()
	if got := l.Counts().Cancels; got["forwarded"] != 1 || got["unknown"] != 1 {
		t.Fatalf("cancel counts %v", got)
	}
}

func TestFakeFailoverEndsOldPrimarySessions(t *testing.T) {
	p, s1 := startFakePG(t, "primary", false), startFakePG(t, "standby1", true)
	var mu sync.Mutex
	var events []Event
	var l *Listener
	var ready sync.WaitGroup
	ready.Add(1)
	// The listener ends the old roles' sessions after it publishes the new roles (so that a
	// session routed meanwhile sees them): the conflict event, emitted in between, is held
	// until the test has seen the new roles, so that the test must wait for the sessions'
	// end itself, not take the new roles for it.
	seenRoles := make(chan struct{})
	l = startFake(t, Config{Routing: true, OnEvent: func(e Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
		if e.Kind == "conflict" {
			<-seenRoles
		}
		if e.Kind == "ended" {
			ready.Wait()
			_ = l.Status() // a hook may read the status without deadlocking the probes
		}
	}}, p, s1)
	release := sync.OnceFunc(func() { close(seenRoles) })
	t.Cleanup(release) // before the listener's Close: a failing test must not leave the probes held
	ready.Done()
	old := connect(t, l.Addr().String(), "")
	if queryOne(t, old, "SELECT node") != "primary" {
		t.Fatal("not on primary")
	}
	ro := connect(t, l.Addr().String(), "agbench.intent=read-only")
	// Promote standby1 while the old primary keeps running (a split brain), then demote it.
	s1.inRecovery.Store(false)
	waitFor(t, "standby1 to be primary", func() bool { return l.Status()[1].Role == "primary" })
	release()
	ended := func(node, msg string) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, e := range events {
			if e.Kind == "ended" && e.Node == node && strings.Contains(e.Msg, msg) {
				return true
			}
		}
		return false
	}
	waitFor(t, "the old primary's sessions ended", func() bool { return ended("primary", "1 session(s) ended") })
	waitFor(t, "the promoted standby's read-intent sessions ended", func() bool { return ended("standby1", "1 read-intent session(s) ended") })
	// Both fakes report timeline 1: the listener falls back to the node it saw promoted, and
	// says so in later rounds too, when the old primary is also older than the last primary.
	seen := l.Status()[0].ProbedAt
	waitFor(t, "more probe rounds", func() bool { return l.Status()[0].ProbedAt.After(seen.Add(100 * time.Millisecond)) })
	if st := l.Status()[0]; st.Role != "stale-primary" || !strings.Contains(st.Conflict, "standby1 is the primary: left recovery most recently") {
		t.Fatalf("old primary's role %q (%s), want stale-primary", st.Role, st.Conflict)
	}
	if _, err := tryQueryOne(old, "SELECT node"); err == nil {
		t.Fatal("the session on the old primary was not ended")
	}
	if got := queryOne(t, connect(t, l.Addr().String(), ""), "SELECT node"); got != "standby1" {
		t.Fatalf("new session went to %s", got)
	}
	if _, err := tryQueryOne(ro, "SELECT node"); err == nil {
		t.Fatal("the read-intent session on the promoted node was not ended")
	}
	p.inRecovery.Store(true)
	waitFor(t, "old primary to be a standby", func() bool { return l.Status()[0].Role == "standby" })
	if got := queryOne(t, connect(t, l.Addr().String(), "agbench.intent=read-only"), "SELECT node"); got != "primary" {
		t.Fatalf("read intent after failover went to %s", got)
	}
}

// eventLog collects a listener's events.
type eventLog struct {
	mu     sync.Mutex
	events []Event
}

func (e *eventLog) add(ev Event) {
	e.mu.Lock()
	e.events = append(e.events, ev)
	e.mu.Unlock()
}

// find returns the first event of the kind on the node whose message has msg.
func (e *eventLog) find(kind, node, msg string) (Event, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range e.events {
		if ev.Kind == kind && ev.Node == node && strings.Contains(ev.Msg, msg) {
			return ev, true
		}
	}
	return Event{}, false
}

// A standby that is promoted loses the read-intent sessions routed to it as a
// standby, as SQL Server's listener drops its connections at a failover; the other
// standby's sessions are not touched, and new read-intent sessions follow the new roles.
func TestFakePromotionEndsReadIntentSessions(t *testing.T) {
	p, s1, s2 := startFakePG(t, "primary", false), startFakePG(t, "standby1", true), startFakePG(t, "standby2", true)
	var log eventLog
	l := startFake(t, Config{Metrics: "127.0.0.1:0", Routing: true, RoutingList: "(('standby1','standby2'))",
		RoutingLists: map[string]string{"standby1": "('standby2','standby1')"}, OnEvent: log.add}, p, s1, s2)
	ro1, ro2 := connect(t, l.Addr().String(), "agbench.intent=read-only"), connect(t, l.Addr().String(), "agbench.intent=read-only")
	if n1, n2 := queryOne(t, ro1, "SELECT node"), queryOne(t, ro2, "SELECT node"); n1 != "standby1" || n2 != "standby2" {
		t.Fatalf("read intent on %s and %s, want standby1 and standby2", n1, n2)
	}
	// A failover: the primary goes back into recovery, standby1 leaves it.
	p.inRecovery.Store(true)
	s1.inRecovery.Store(false)
	waitFor(t, "standby1 to be primary", func() bool { return l.Status()[1].Role == "primary" })
	waitFor(t, "the read-intent session on standby1 ended", func() bool { _, err := tryQueryOne(ro1, "SELECT node"); return err != nil })
	if got := queryOne(t, ro2, "SELECT node"); got != "standby2" {
		t.Fatalf("the session on standby2 after standby1's promotion: %s", got)
	}
	if got := queryOne(t, connect(t, l.Addr().String(), "agbench.intent=read-only"), "SELECT node"); got != "standby2" {
		t.Fatalf("read intent after the promotion went to %s, want standby2 (first in standby1's list)", got)
	}
	waitFor(t, "the ended event", func() bool {
		_, ok := log.find("ended", "standby1", "1 read-intent session(s) ended: the node is no longer a standby (now primary)")
		return ok
	})
	if _, ok := log.find("role", "standby1", "no longer a standby"); !ok {
		t.Errorf("no role event saying standby1 is no longer a standby: %v", log.events)
	}
	if body := httpGet(t, "http://"+l.MetricsAddr().String()+"/metrics"); !strings.Contains(body, `agbench_listener_promotion_ended_sessions_total{node="standby1"} 1`) {
		t.Errorf("metrics lack the ended session:\n%s", body)
	}
}

// A read-intent session routed to a standby whose promotion is settled while the
// session is being opened (after the promotion's sessions were ended) is routed again
// before any byte reaches its client.
func TestFakeSessionRoutedDuringPromotionIsRoutedAgain(t *testing.T) {
	p, s1, s2 := startFakePG(t, "primary", false), startFakePG(t, "standby1", true), startFakePG(t, "standby2", true)
	var log eventLog
	l := startFake(t, Config{Routing: true, RoutingList: "('standby1','standby2')",
		RoutingLists: map[string]string{"standby1": "('standby2','standby1')"}, OnEvent: log.add}, p, s1, s2)
	promoted := make(chan bool, 1)
	hook := func() { // standby1 holds its answer until the listener has settled its promotion
		p.inRecovery.Store(true)
		s1.inRecovery.Store(false)
		deadline := time.Now().Add(time.Minute)
		for l.Status()[1].Role != "primary" && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		promoted <- l.Status()[1].Role == "primary"
	}
	s1.beforeAnswer.Store(&hook)
	c := connect(t, l.Addr().String(), "agbench.intent=read-only")
	if !<-promoted {
		t.Fatal("the listener did not see standby1 promoted")
	}
	if got := queryOne(t, c, "SELECT node"); got != "standby2" {
		t.Fatalf("the session routed during the promotion is on %s, want standby2", got)
	}
	if _, ok := log.find("retry", "standby1", "stopped being a standby while a read-only session was routed to it; routing the session again"); !ok {
		t.Errorf("no retry event: %v", log.events)
	}
}

func TestFakeTLS(t *testing.T) {
	p := startFakePG(t, "primary", false)
	l := startFake(t, Config{TLS: selfSigned(t), RequireTLS: true}, p)
	c := connect(t, l.Addr().String(), "sslmode=require")
	if queryOne(t, c, "SELECT node") != "primary" {
		t.Fatal("wrong node")
	}
	_, err := tryConnect(l.Addr().String(), "")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != codeInvalidAuthSpec {
		t.Fatalf("plain session with TLS required: %v", err)
	}
	// Without a certificate the listener declines SSL as a server without ssl does.
	l2 := startFake(t, Config{}, p)
	if _, err := tryConnect(l2.Addr().String(), "sslmode=require"); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("sslmode=require without a certificate: %v", err)
	}
	queryOne(t, connect(t, l2.Addr().String(), "sslmode=prefer"), "SELECT node")
}

// selfSigned makes a throwaway certificate for 127.0.0.1.
func selfSigned(t testing.TB) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "agbench test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

func TestFakeRedirectAndMetrics(t *testing.T) {
	p, s1 := startFakePG(t, "primary", false), startFakePG(t, "standby1", true)
	l := startFake(t, Config{Routing: true, Metrics: "127.0.0.1:0", RoutingList: "('standby1')"}, p, s1)
	ctx := context.Background()
	m := l.MetricsAddr().String()
	hp, err := Resolve(ctx, m, ReadOnly)
	if err != nil || hp != s1.addr() {
		t.Fatalf("Resolve read-only = %q, %v; want %s", hp, err, s1.addr())
	}
	cfg, err := pgconn.ParseConfig("host=nowhere port=1 user=app sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	if err := Redirect(ctx, m, ReadWrite, cfg); err != nil || cfg.Host != "127.0.0.1" {
		t.Fatalf("Redirect: %v %+v", err, cfg.Host)
	}
	pc, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := queryOne(t, pc, "SELECT node"); got != "primary" {
		t.Fatalf("redirected read-write session on %s", got)
	}
	pc.Close(ctx)
	s1.stop()
	waitFor(t, "standby1 down", func() bool { return !l.Status()[1].Up })
	_, err = Resolve(ctx, m, ReadOnly)
	var re *ResolveError
	if !errors.As(err, &re) || re.Status != http.StatusServiceUnavailable || !strings.Contains(re.Msg, "('standby1')") {
		t.Fatalf("Resolve with standby1 down: %v", err)
	}
	rw := connect(t, l.Addr().String(), "")
	queryOne(t, rw, "SELECT node")
	rw.Close(ctx)
	waitFor(t, "the session to end", func() bool { return l.metrics.snapshotActive("primary") == 0 })
	resp, err := http.Get("http://" + m + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`agbench_listener_sessions_total{intent="read-write",node="primary"} 1`,
		`agbench_listener_sessions_total{intent="read-only-redirect",node="standby1"} 1`,
		`agbench_listener_backend_up{node="standby1"} 0`,
		`agbench_listener_backend_primary{node="primary"} 1`,
		`agbench_listener_session_failures_total{reason="no_target",intent="read-only-redirect"} 1`,
		`agbench_listener_bytes_total{node="primary",direction="to_client"}`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if t.Failed() {
		t.Log(string(body))
	}
	resp, err = http.Get("http://" + m + "/status")
	if err != nil {
		t.Fatal(err)
	}
	var st struct{ Nodes []NodeStatus }
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil || len(st.Nodes) != 2 || st.Nodes[0].Role != "primary" || st.Nodes[1].Up {
		t.Fatalf("status %+v %v", st, err)
	}
}

func TestFakeCloseDrainsThenCuts(t *testing.T) {
	p := startFakePG(t, "primary", false)
	l := startFake(t, Config{DrainTimeout: 200 * time.Millisecond}, p)
	c := connect(t, l.Addr().String(), "")
	queryOne(t, c, "SELECT node")
	done := make(chan struct{})
	go func() {
		l.Close()
		l.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return")
	}
	if _, err := tryQueryOne(c, "SELECT node"); err == nil {
		t.Fatal("session survived Close")
	}
	if _, err := net.DialTimeout("tcp", l.Addr().String(), time.Second); err == nil {
		t.Fatal("still accepting after Close")
	}
	<-l.Done()
}

func TestConfigErrorsAllAtOnce(t *testing.T) {
	_, err := Start(context.Background(), Config{
		Listen:      "nonsense",
		Backends:    []Backend{{Name: "a", Addr: "127.0.0.1:1", ProbeConnString: "x"}, {Name: "a", Addr: "bad"}},
		RoutingList: "(('a','b')",
		MaxLag:      -time.Second,
		RequireTLS:  true,
		CausalWait:  -time.Second,
	})
	if !agerr.IsBadInput(err) {
		t.Fatalf("want bad input, got %v", err)
	}
	for _, want := range []string{"--listen", "name given twice", `address "bad"`, "no connection string", "at character", "--max-lag", "--tls-require",
		"--causal-wait -1s: must be positive"} { // the flag's rule, in the flag's words
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	_, err = Start(context.Background(), Config{Backends: []Backend{{Name: "a", Addr: "127.0.0.1:1", ProbeConnString: "x"}}, RoutingList: "('b')"})
	if !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "'b'") {
		t.Fatalf("unknown node: %v", err)
	}
}

// A node that does not accept the connection is skipped at once, and kept out of routing
// until its next good probe (here: never, the probes are too rare).
func TestFakeUnreachableNodeIsSkippedAtOnce(t *testing.T) {
	p, s1, s2 := startFakePG(t, "primary", false), startFakePG(t, "standby1", true), startFakePG(t, "standby2", true)
	// Probes too rare to notice: the session itself finds standby1 gone and moves on.
	l := startFake(t, Config{Routing: true, RoutingList: "('standby1','standby2')", ProbeInterval: time.Hour}, p, s1, s2)
	s1.stop()
	if got := queryOne(t, connect(t, l.Addr().String(), "agbench.intent=read-only"), "SELECT node"); got != "standby2" {
		t.Fatalf("got %s, want standby2", got)
	}
	s2.stop()
	_, err := tryConnect(l.Addr().String(), "agbench.intent=read-only")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != codeRejected || !strings.Contains(pe.Message, "standby2: refused a session since its last probe (connection refused)") {
		t.Fatalf("with both standbys gone: %v", err)
	}
	if f := l.Counts().Failures; f["backend_unreachable/read-only"] != 1 || f["no_target/read-only"] != 0 {
		t.Fatalf("failures %v", f)
	}
	if r := l.Counts().Retries; r["standby1/connect_failed"] != 1 || r["standby2/connect_failed"] != 1 {
		t.Fatalf("retries %v", r)
	}
}
