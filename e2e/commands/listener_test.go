package commands

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/experiment"
)

// agbench listener in front of the shared cluster, by name and by URLs: read intent lands
// where the routing list says.
func TestListenerCommand(t *testing.T) {
	t.Parallel()
	topo, env := sharedCluster(t)
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

	l := e2etest.Start(t, env, "listener", "--cluster", topo.Name, "--listen", "127.0.0.1:0", "--routing-list", "('standby1')")
	addr := waitListen(t, l.Stdout)
	if got := inRecovery(addr, "agbench.intent=read-only"); got != "t" {
		t.Errorf("read intent: in recovery %s", got)
	}
	if got := inRecovery(addr, ""); got != "f" {
		t.Errorf("no intent: in recovery %s", got)
	}
	if code := l.Stop(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, l.Stderr)
	}
	for _, want := range []string{"routing list: ('standby1')", "standby1", "standby", "stopped"} {
		if !strings.Contains(l.Stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, l.Stdout)
		}
	}

	// Any cluster, by URLs; node names from NAME=URL and from host:port.
	p, s := topo.Primary(), topo.Standbys()[0]
	l = e2etest.Start(t, env, "listener", "--listen", "127.0.0.1:0", "--primary", "main="+topo.URL(p, ""),
		"--standby", topo.URL(s, ""), "--routing-list", "main=('main')")
	addr = waitListen(t, l.Stdout)
	if got := inRecovery(addr, "options='-c agbench.intent=read-only'"); got != "f" {
		t.Errorf("main's own list names main: in recovery %s", got)
	}
	if code := l.Stop(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, l.Stderr)
	}
	if out := l.Stdout.String(); !strings.Contains(out, "127.0.0.1:") || !strings.Contains(out, "main") {
		t.Errorf("output: %s", out)
	}
}

var listenRE = regexp.MustCompile(`agbench listener on (127\.0\.0\.1:\d+)`)

// waitListen waits for the listener's line that says where it listens, and returns the
// address.
func waitListen(t *testing.T, out *e2etest.Buffer) string {
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

// With --listener alone in front of servers that have no cluster_name, the sessions' nodes
// are named by their address and the run says why, and how to name them; with the nodes
// given by NAME=URL beside the listener, they carry those names and the run says nothing.
func TestListenerAloneSaysWhyNodesAreAddresses(t *testing.T) {
	t.Parallel()
	clustertest.Require(t)
	h := clustertest.NewHandmade(t, 1)
	lcs := e2etest.HandmadeListener(t, h, "")
	env := map[string]string{"AGBENCH_HOME": t.TempDir()}
	args := []string{"stress", "--listener", lcs, "--intent", "read-only", "--query", "SELECT 1", "--threads", "1",
		"--iterations", "5", "--sample=false", "--results", t.TempDir()}
	code, out, errs := e2etest.Run(t, env, args...)
	addr := fmt.Sprintf("127.0.0.1:%d", h.Ports[1])
	if code != 0 || !strings.Contains(out, "landed  sessions: "+addr+" (standby)") || !strings.Contains(out+errs, experiment.AddrNamedNote) {
		t.Fatalf("--listener alone: exit %d, want sessions on %s and the note\n%s\n%s", code, addr, out, errs)
	}
	named := append(args, "--primary", "primary="+h.URL(0, clustertest.HandmadeApp), "--standby", "standby1="+h.URL(1, clustertest.HandmadeApp))
	code, out, errs = e2etest.Run(t, env, named...)
	if code != 0 || !strings.Contains(out, "landed  sessions: standby1 (standby)") || strings.Contains(out+errs, experiment.AddrNamedNote) {
		t.Fatalf("--listener with named nodes: exit %d\n%s\n%s", code, out, errs)
	}
}
