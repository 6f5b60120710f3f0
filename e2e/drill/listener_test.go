package drill

import (
	"strconv"
	"strings"
	"testing"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
)

// TestDrillThroughListener runs a kill-primary drill on a cluster made with a listener: the
// load goes through the listener, and the time from the fault until it routed a new write
// session to the new primary, and a read-intent session to a standby, is measured (the
// probe opens new sessions when the load's own live through the failover), marked in the
// cycle's events and shown in the table.
func TestDrillThroughListener(t *testing.T) {
	t.Parallel()
	clustertest.Require(t)
	home := clustertest.Home(t)
	env := map[string]string{"AGBENCH_HOME": home}
	base, err := clustertest.FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	lp, err := clustertest.FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	if code, out, errs := e2etest.Run(t, env, "cluster", "create", "--name", "dl", "--standbys", "2", "--commit", "sync", "--base-port", strconv.Itoa(base),
		"--set", "fsync=off", "--listener=127.0.0.1:"+strconv.Itoa(lp)); code != 0 {
		t.Fatalf("create: %d %s %s", code, out, errs)
	}
	t.Cleanup(func() { e2etest.Run(t, env, "cluster", "destroy", "--name", "dl") })
	results := t.TempDir()
	code, out, errs := e2etest.Run(t, env, "drill", "--cluster", "dl", "--fault", "kill-primary", "--cycles", "1", "--between", "500ms",
		"--vus", "2", "--read-vus", "2", "--results", results)
	if code != 0 {
		t.Fatalf("drill: exit %d\n%s\n%s", code, out, errs)
	}
	r := e2etest.ReadOneResult(t, results)
	dc, err := r.Steps[0].DrillCycle()
	if err != nil || dc == nil || !dc.Checked || dc.Lost == nil || *dc.Lost != 0 {
		t.Fatalf("cycle %+v (%v)", dc, err)
	}
	if dc.RerouteWriteSeconds == nil || *dc.RerouteWriteSeconds <= 0 {
		t.Fatalf("reroute of writes not measured: %s", dc.RerouteNote)
	}
	t.Logf("reroute write %.3f s, read %.3f s", *dc.RerouteWriteSeconds, *dc.RerouteReadSeconds)
	if dc.RerouteReadSeconds == nil {
		t.Fatalf("reroute of reads not measured: %q", dc.RerouteNote)
	}
	var marked bool
	for _, e := range dc.Events {
		marked = marked || e.Event == result.EventRerouteWrite
	}
	if !marked || !strings.Contains(out, "reroute write s") {
		t.Fatalf("events %+v; table:\n%s", dc.Events, out)
	}
}
