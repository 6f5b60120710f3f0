package faults

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// stress --cluster with its one standby down: a run whose sessions all go to the primary
// (read-write, no routing) checks only the primary, runs, and says the standby was down and
// left out of its samplers (it refused to start: "--cluster t: node ...: connection
// refused"); a read-intent run, whose sessions would go to the standby, still refuses to
// start (exit 1) and names it.
func TestStressClusterStandbyDown(t *testing.T) {
	t.Parallel()
	clustertest.Require(t)
	home := clustertest.Home(t)
	topo := clustertest.NewIn(t, home, clustertest.Options{Standbys: 1})
	env := map[string]string{"AGBENCH_HOME": home}
	stby := topo.Standbys()[0].Name
	if err := topo.StopNode(context.Background(), stby); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(t.TempDir(), "results")
	code, out, errs := e2etest.Run(t, env, "stress", "--cluster", topo.Name, "-q", "SELECT 1", "--threads", "1",
		"--duration", "2s", "--results", results)
	t.Logf("primary-only run, standby %s down: exit %d\n%s\n%s", stby, code, out, errs)
	if code != 0 {
		t.Fatalf("a primary-only run refused for a standby it does not use: exit %d\n%s\n%s", code, out, errs)
	}
	warned := strings.Join(e2etest.ReadOneResult(t, results).Warnings, "\n")
	if !strings.Contains(warned, stby+" is not used by this run") {
		t.Errorf("the result does not say %s was down and not used: %q", stby, warned)
	}
	code, out, errs = e2etest.Run(t, env, "stress", "--cluster", topo.Name, "-q", "SELECT 1", "--threads", "1",
		"--intent", "read-only", "--duration", "2s", "--results", filepath.Join(t.TempDir(), "ro"))
	t.Logf("read-intent run, standby %s down: exit %d\n%s\n%s", stby, code, out, errs)
	if code != 1 || !strings.Contains(errs, "node "+stby) || !strings.Contains(errs, "connection refused") {
		t.Errorf("a read-intent run with its standby down: exit %d, want 1 naming %s\n%s\n%s", code, stby, out, errs)
	}
}
