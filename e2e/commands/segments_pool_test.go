package commands

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// TestTPCCSegmentsCheckTheirShareOfThePool starts the three segments of a pool of 24
// sessions on a server of 40 connections one after another, each once the one before holds
// its sessions: each checks the connections its own share needs (8 and its own), so the
// last, which finds the others' sessions in use, is not refused for the whole pool's 25. A
// segment whose own share does not fit is refused, naming its share, with nothing written.
func TestTPCCSegmentsCheckTheirShareOfThePool(t *testing.T) {
	t.Parallel()
	home := clustertest.Home(t)
	topo := clustertest.NewIn(t, home, clustertest.Options{Name: "pool", Settings: map[string]string{"max_connections": "40"}})
	env := map[string]string{"AGBENCH_HOME": home}
	if code, out, errs := e2etest.Run(t, env, "tpcc", "build", "--cluster", topo.Name, "--warehouses", "3"); code != 0 {
		t.Fatalf("build: exit %d\n%s\n%s", code, out, errs)
	}
	dir := t.TempDir()
	run := func(i int, sessions string) []string {
		return []string{"tpcc", "run", "--cluster", topo.Name, "--terminals", sessions, "--sessions", sessions, "--think-scale", "0.01",
			"--rampup", "0s", "--duration", "2s", "--sample=false", "--segment", fmt.Sprintf("%d/3", i), "--segment-run", "pool",
			"--results", filepath.Join(dir, fmt.Sprint(i))}
	}
	procs := make([]*e2etest.Proc, 3)
	for i := range procs {
		procs[i] = e2etest.Start(t, env, run(i, "24")...)
		// Said once its sessions are open, as it arrives at the barrier.
		procs[i].WaitOutput(t, fmt.Sprintf("segment %d/3: waiting for the other segments at step 1", i), 2*time.Minute)
	}
	for i, p := range procs {
		if code := p.Wait(t, 3*time.Minute); code != 0 {
			t.Fatalf("segment %d: exit %d\nstdout %s\nstderr %s", i, code, p.Stdout, p.Stderr)
		}
	}
	bad := filepath.Join(t.TempDir(), "results")
	args := run(0, "120")
	args[len(args)-1] = bad
	code, _, errs := e2etest.Run(t, env, args...)
	if want := "--sessions 120 (segment 0/3's share, 40): needs 41 connections"; code != 2 || !strings.Contains(errs, want) {
		t.Errorf("a share larger than the server's connections: exit %d, stderr %q; want 2 naming %q", code, errs, want)
	}
	e2etest.WantNothing(t, filepath.Join(bad, "*"))
}
