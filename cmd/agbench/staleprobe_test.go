package main

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/listener"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/target"
)

func TestStaleProbeBadInput(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"AGBENCH_HOME": dir}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"stress", "--primary", "host=127.0.0.1", "-q", "SELECT 1", "--stale-probe=banana", "--intent", "ro", "--standby", "host=127.0.0.2"}, `--stale-probe "banana": want eventual, causal or both`},
		{[]string{"stress", "--primary", "host=127.0.0.1", "-q", "SELECT 1", "--stale-probe"}, "--stale-probe: the probe reads with read intent"},
		{[]string{"stress", "--primary", "host=127.0.0.1", "-q", "SELECT 1", "--stale-probe", "--intent", "ro"}, "--stale-probe: no standby to read from"},
		{[]string{"stress", "--primary", "host=127.0.0.1", "--standby", "host=127.0.0.2", "-q", "SELECT 1", "--stale-probe=causal", "--intent", "ro"}, "--stale-probe causal: needs a listener"},
		{[]string{"tpcc", "run", "--primary", "host=127.0.0.1", "--stale-probe"}, "--stale-probe: the probe reads with read intent"},
		{[]string{"stress", "--primary", "host=127.0.0.1", "--standby", "host=127.0.0.2", "-q", "SELECT 1", "--stale-probe=both", "--intent", "ro"}, "--stale-probe both: needs a listener"},
	}
	for _, c := range cases {
		code, _, errs := runCLI(t, env, append(c.args, "--results", filepath.Join(dir, "results"))...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", c.args, code, errs, c.want)
		}
	}
}

// The stale-read probe beside stress through a listener, with the standby's
// replay slowed: in eventual mode some reads miss the write and the table, the per-node
// lines and the result say so; in causal mode none does.
func TestStaleProbeOnCluster(t *testing.T) {
	clustertest.Require(t)
	home := clustertest.Home(t)
	topo := clustertest.NewIn(t, home, clustertest.Options{Standbys: 1})
	env := map[string]string{"AGBENCH_HOME": home}
	res := filepath.Join(t.TempDir(), "results")
	stby := slowReplay(t, topo, "30ms")
	ctx := context.Background()
	cfg := withFreePort(listener.ConfigFromTopology(topo))
	cfg.CausalWait = 10 * time.Second
	l, err := listener.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	host, port, _ := net.SplitHostPort(l.Addr().String())
	lcs := target.Redirect(topo.ConnString(topo.Primary(), ""), host, port)

	for _, mode := range []string{result.StaleEventual, result.StaleCausal, result.StaleBoth} {
		code, out, errs := runCLI(t, env, "stress", "--listener", lcs, "--intent", "read-only", "--query", "SELECT 1",
			"--threads", "1", "--duration", "2s", "--sample=false", "--stale-probe="+mode, "--results", res)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", mode, code, out, errs)
		}
		modes := []string{mode}
		if mode == result.StaleBoth {
			modes = []string{result.StaleEventual, result.StaleCausal}
		}
		st := readResult(t, out).Steps[0]
		for _, m := range modes {
			want := []string{"stale %", "visible p99 ms", "step 1 eventual " + stby.Name + ": "}
			if m == result.StaleCausal {
				want = []string{"causal stale %", "causal start p50 ms", "step 1 causal " + stby.Name + ": "}
			}
			for _, w := range want {
				if !strings.Contains(out, w) {
					t.Errorf("%s: output lacks %q:\n%s", mode, w, out)
				}
			}
			p, err := st.StaleProbe(m)
			if err != nil || p == nil || p.Mode != m {
				t.Fatalf("%s: %s section %+v, %v", mode, m, p, err)
			}
			n := p.Nodes[stby.Name]
			if n.Reads == 0 || p.Errors != 0 {
				t.Fatalf("%s: %s: %+v (errors %d: %s)", mode, m, n, p.Errors, p.ErrorSample)
			}
			switch m {
			case result.StaleEventual:
				if n.Stale == 0 || n.Visible.P99 == 0 {
					t.Errorf("%s: eventual, replay 30 ms behind: %d of %d reads stale, visible p99 %d µs", mode, n.Stale, n.Reads, n.Visible.P99)
				}
			case result.StaleCausal:
				if n.Stale != 0 {
					t.Errorf("%s: causal: %d of %d reads stale", mode, n.Stale, n.Reads)
				}
			}
			t.Logf("%s: %s: %d/%d stale, visible p50 %d p99 %d µs, session p50 %d µs", mode, m, n.Stale, n.Reads, n.Visible.P50, n.Visible.P99, n.Session.P50)
		}
		if ps, _ := st.StaleProbes(); len(ps) != len(modes) {
			t.Errorf("%s: %d probe sections", mode, len(ps))
		}
	}
}

// slowReplay holds the first standby's replay delay behind the primary's commits
// (recovery_min_apply_delay), so that a read right after a commit there is stale, and
// returns the standby.
func slowReplay(t *testing.T, topo *cluster.Topology, delay string) *cluster.Node {
	t.Helper()
	stby := topo.Standbys()[0]
	ctx := context.Background()
	c, err := pgconn.Connect(ctx, topo.ConnString(stby, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for _, sql := range []string{"ALTER SYSTEM SET recovery_min_apply_delay = '" + delay + "'", "SELECT pg_reload_conf()"} {
		if _, err := c.Exec(ctx, sql).ReadAll(); err != nil {
			t.Fatal(err)
		}
	}
	return stby
}
