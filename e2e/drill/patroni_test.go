package drill

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/render"
)

// The commands on a cluster under Patroni, end to end: create (etcd and a Patroni per
// node, started by agbench), status with Patroni's view, failover as Patroni's switchover,
// a planned drill (a switchover per cycle), stop (no Patroni, etcd or postmaster left) and
// start again, then destroy.
func TestClusterPatroniCommands(t *testing.T) {
	t.Parallel()
	clustertest.RequirePatroni(t)
	home := clustertest.Home(t)
	env := map[string]string{"AGBENCH_HOME": home}
	base, err := clustertest.FreePorts(cluster.PatroniPortSpan)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := e2etest.Run(t, env, "cluster", "create", "--name", "p", "--ha", "patroni", "--standbys", "1", "--commit", "sync",
		"--base-port", strconv.Itoa(base), "--set", "fsync=off")
	t.Cleanup(func() {
		if topo, err := cluster.Load(home, "p"); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			_ = topo.Destroy(ctx)
		}
	})
	if code != 0 {
		t.Fatalf("create: exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"Patroni's view", "leader", "sync_standby", "ttl 10s, loop_wait 2s, retry_timeout 4s, synchronous_mode on"} {
		if !strings.Contains(out, want) {
			t.Fatalf("create's status lacks %q:\n%s", want, out)
		}
	}
	leader := func() string {
		t.Helper()
		code, out, errs := e2etest.Run(t, env, "cluster", "status", "--name", "p", "--json")
		if code != 0 {
			t.Fatalf("status: exit %d %s", code, errs)
		}
		var st cluster.Status
		if err := json.Unmarshal([]byte(out), &st); err != nil || st.PatroniView == nil || st.PatroniView.Leader() == nil {
			t.Fatalf("status --json: %v: %s", err, out)
		}
		return st.PatroniView.Leader().Name
	}
	if l := leader(); l != "primary" {
		t.Fatalf("leader %s after create", l)
	}

	code, out, errs = e2etest.Run(t, env, "cluster", "failover", "--name", "p")
	if code != 0 || !strings.Contains(out, "POST /switchover") {
		t.Fatalf("failover: exit %d\n%s\n%s", code, out, errs)
	}
	if l := leader(); l != "standby1" {
		t.Fatalf("leader %s after the switchover", l)
	}

	results := t.TempDir()
	code, out, errs = e2etest.Run(t, env, "drill", "--cluster", "p", "--fault", "planned", "--cycles", "1", "--between", "300ms",
		"--vus", "2", "--read-vus", "1", "--results", results)
	if code != 0 {
		t.Fatalf("drill: exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"failed over by Patroni (ttl 10s", "synchronous_mode on, not strict", "switchover: Patroni promoted primary", "sync commit: 0 of ", "no sync standby s"} {
		if !strings.Contains(out, want) {
			t.Fatalf("drill's output lacks %q:\n%s", want, out)
		}
	}
	// The new primary's synchronous standbys were sampled after the switchover; a span
	// without one (Patroni empties synchronous_standby_names until the old leader streams
	// again) is said under the table and in the HTML report's cycle.
	dc, err := e2etest.ReadOneResult(t, results).Steps[0].DrillCycle()
	if err != nil || dc == nil || dc.SyncGap == nil || dc.SyncGap.Samples == 0 || dc.SyncGap.NoSyncSeconds == nil {
		t.Fatalf("cycle %+v (%v): the new primary's synchronous standbys not sampled", dc, err)
	}
	html := filepath.Join(t.TempDir(), "r.html")
	if code, _, errs := e2etest.Run(t, nil, "report", results, "-o", html, "-q"); code != 0 {
		t.Fatalf("report: exit %d %s", code, errs)
	}
	page, _ := os.ReadFile(html)
	if !strings.Contains(string(page), "no sync standby s") {
		t.Fatalf("the report's drill table lacks the column")
	}
	if line := render.SyncGapSentence(dc.SyncGap); line != "" && (!strings.Contains(out, line) || !strings.Contains(string(page), line)) {
		t.Fatalf("%q not in the drill's output or the report:\n%s", line, out)
	}
	t.Log(render.SyncGapSentence(dc.SyncGap))

	if code, out, errs = e2etest.Run(t, env, "cluster", "stop", "--name", "p"); code != 0 {
		t.Fatalf("stop: exit %d\n%s\n%s", code, out, errs)
	}
	topo, err := cluster.Load(home, "p")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range topo.Nodes {
		if n.PatroniPID != 0 || topo.Running()[n.Name] {
			t.Fatalf("after stop: %s's Patroni pid %d, running %v", n.Name, n.PatroniPID, topo.Running()[n.Name])
		}
	}
	if topo.Patroni.Etcd.PID != 0 {
		t.Fatalf("after stop: etcd pid %d", topo.Patroni.Etcd.PID)
	}
	if code, out, errs = e2etest.Run(t, env, "cluster", "start", "--name", "p"); code != 0 {
		t.Fatalf("start: exit %d\n%s\n%s", code, out, errs)
	}
	leader()
	if code, _, errs = e2etest.Run(t, env, "cluster", "destroy", "--name", "p"); code != 0 {
		t.Fatalf("destroy: exit %d %s", code, errs)
	}
	if _, err := os.Stat(topo.Dir); !os.IsNotExist(err) {
		t.Fatalf("destroy left %s (%v)", topo.Dir, err)
	}
}
