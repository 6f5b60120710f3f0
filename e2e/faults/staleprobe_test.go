package faults

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/listener"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/target"
)

// The stale-read probe beside stress through a listener, with the standby's
// replay slowed: in eventual mode some reads miss the write and the table, the per-node
// lines and the result say so; in causal mode none does. The replay is held a second
// behind: a read is stale only if it comes before the replay, and on a busy machine (load
// 46 on 2 cores) the probe's read came 140–250 ms after its write, so a delay of 30 ms
// gave 0 stale reads of 4. Causal reads wait that second each, so the run is 4 s.
func TestStaleProbeOnCluster(t *testing.T) {
	t.Parallel()
	clustertest.Require(t)
	home := clustertest.Home(t)
	topo := clustertest.NewIn(t, home, clustertest.Options{Standbys: 1})
	env := map[string]string{"AGBENCH_HOME": home}
	res := filepath.Join(t.TempDir(), "results")
	stby := slowReplay(t, topo, "1s")
	ctx := context.Background()
	cfg := e2etest.OnFreePort(listener.ConfigFromTopology(topo))
	cfg.CausalWait = 10 * time.Second
	l, err := listener.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	host, port, _ := net.SplitHostPort(l.Addr().String())
	lcs := target.Redirect(topo.ConnString(topo.Primary(), ""), host, port)

	for _, mode := range []string{result.StaleEventual, result.StaleCausal, result.StaleBoth} {
		code, out, errs := e2etest.Run(t, env, "stress", "--listener", lcs, "--intent", "read-only", "--query", "SELECT 1",
			"--threads", "1", "--duration", "4s", "--sample=false", "--stale-probe="+mode, "--results", res)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", mode, code, out, errs)
		}
		modes := []string{mode}
		if mode == result.StaleBoth {
			modes = []string{result.StaleEventual, result.StaleCausal}
		}
		st := e2etest.PrintedResult(t, out).Steps[0]
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
					t.Errorf("%s: eventual, replay 1 s behind: %d of %d reads stale, visible p99 %d µs", mode, n.Stale, n.Reads, n.Visible.P99)
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
