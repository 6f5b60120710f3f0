package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/listener"
)

func TestListenerBadInputExits2(t *testing.T) {
	env := map[string]string{"AGBENCH_HOME": t.TempDir()}
	p := "--primary=postgres://u@127.0.0.1:5432/db"
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"listener"}, []string{"--cluster NAME"}},
		{[]string{"listener", "--cluster", "nope"}, []string{"nope"}},
		{[]string{"listener", "--cluster", "lab", p}, []string{"one or the other"}},
		{[]string{"listener", p, "--routing-list", "(('a'"}, []string{"--routing-list", "at character"}},
		{[]string{"listener", p, "--routing-list", "('standby9')"}, []string{"'standby9'", "127.0.0.1:5432"}},
		{[]string{"listener", p, "--routing", "maybe", "--max-lag", "-1s", "--tls-cert", "x.pem", "--listen", "bogus"},
			[]string{"--routing", "--max-lag", "--tls-cert and --tls-key", "--listen"}},
		{[]string{"listener", "--primary", "host=/var/run/postgresql"}, []string{"Unix socket"}},
		{[]string{"listener", p, "--standby", "postgres://u@127.0.0.1:5432/db"}, []string{"given twice"}},
		{[]string{"listener", p, "--tls-require"}, []string{"--tls-require needs"}},
		{[]string{"listener", p, "--consistency", "strong", "--causal-wait", "-1s"}, []string{`--consistency: consistency "strong": want eventual or session`, "--causal-wait -1s: must be positive"}},
		{[]string{"listener", p, "--causal-wait", "0s"}, []string{"--causal-wait 0s: must be positive"}},
		{[]string{"listener", p, "--tls-cert", "/nonexistent.pem", "--tls-key", "/nonexistent.key"}, []string{"/nonexistent.pem"}},
	}
	for _, c := range cases {
		code, _, errs := runCLI(t, env, c.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", c.args, code, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: stderr %q lacks %q", c.args, errs, w)
			}
		}
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader in different goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startCLI runs agbench in the background until the returned stop is called.
func startCLI(t *testing.T, env map[string]string, args ...string) (out *syncBuffer, stop func() int) {
	t.Helper()
	out = &syncBuffer{}
	errb := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	a := &app{stdout: out, stderr: errb, getenv: func(k string) string { return env[k] }}
	code := make(chan int, 1)
	go func() { code <- run(ctx, a, args) }()
	return out, func() int {
		cancel()
		select {
		case c := <-code:
			if c != 0 {
				t.Logf("stderr: %s", errb.String())
			}
			return c
		case <-time.After(time.Minute):
			t.Fatal("agbench listener did not stop")
			return -1
		}
	}
}

func TestListenerLagCell(t *testing.T) {
	lag := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		n    listener.NodeStatus
		want string
	}{
		{listener.NodeStatus{Up: true, Role: "standby", LagSeconds: lag(0)}, "0.0s"},
		{listener.NodeStatus{Up: true, Role: "standby", LagSeconds: lag(2.345)}, "2.3s"},
		{listener.NodeStatus{Up: true, Role: "standby", LagUnknown: "no primary's WAL position seen yet"}, "– (no primary's WAL position seen yet)"},
		{listener.NodeStatus{Up: true, Role: "primary", LagUnknown: "not a standby (primary)"}, "–"},
		{listener.NodeStatus{Up: false, Role: "down", LagUnknown: "down"}, "–"},
	} {
		if got := lagCell(c.n); got != c.want {
			t.Errorf("lagCell(%+v) = %q, want %q", c.n, got, c.want)
		}
	}
}

var listenRE = regexp.MustCompile(`agbench listener on (127\.0\.0\.1:\d+)`)

func waitListen(t *testing.T, out *syncBuffer) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if m := listenRE.FindStringSubmatch(out.String()); m != nil {
			return m[1]
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no listening line in %q", out.String())
	return ""
}

func TestListenerCommand(t *testing.T) {
	clustertest.Require(t)
	home := clustertest.Home(t)
	topo := clustertest.NewIn(t, home, clustertest.Options{Standbys: 1, Name: "lc"})
	env := map[string]string{"AGBENCH_HOME": home}
	inRecovery := func(addr, extra string) string {
		t.Helper()
		host, port, _ := strings.Cut(addr, ":")
		ctx := context.Background()
		c, err := pgconn.Connect(ctx, "host="+host+" port="+port+" user="+topo.Superuser+" dbname="+topo.Database+
			" passfile="+topo.PassFile+" sslmode=disable "+extra)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		rs, err := c.Exec(ctx, "SELECT pg_is_in_recovery()").ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return string(rs[0].Rows[0][0])
	}

	out, stop := startCLI(t, env, "listener", "--cluster", "lc", "--listen", "127.0.0.1:0", "--routing-list", "('standby1')")
	addr := waitListen(t, out)
	if got := inRecovery(addr, "agbench.intent=read-only"); got != "t" {
		t.Errorf("read intent: in recovery %s", got)
	}
	if got := inRecovery(addr, ""); got != "f" {
		t.Errorf("no intent: in recovery %s", got)
	}
	if code := stop(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"routing list: ('standby1')", "standby1", "standby", "stopped"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// Any cluster, by URLs; node names from NAME=URL and from host:port.
	p, s := topo.Primary(), topo.Standbys()[0]
	out, stop = startCLI(t, env, "listener", "--listen", "127.0.0.1:0", "--primary", "main="+topo.URL(p, ""),
		"--standby", topo.URL(s, ""), "--routing-list", "main=('main')")
	addr = waitListen(t, out)
	if got := inRecovery(addr, "options='-c agbench.intent=read-only'"); got != "f" {
		t.Errorf("main's own list names main: in recovery %s", got)
	}
	if code := stop(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(out.String(), "127.0.0.1:") || !strings.Contains(out.String(), "main") {
		t.Errorf("output: %s", out)
	}
}
