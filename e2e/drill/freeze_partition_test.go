package drill

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster"
)

// freeze-primary and partition-primary end to end on a sync cluster: each fault injected,
// detected, fenced, failed over and healed (exit 0, the detection in the table and the
// verdict, the cluster whole); a frozen primary refused before any cycle (exit 2, nothing
// made); and `cluster failover` fencing a primary that does not answer.
func TestDrillFreezeAndPartition(t *testing.T) {
	t.Parallel()
	home, env, _ := syncCluster(t)
	results := t.TempDir()
	for _, fault := range []string{"freeze-primary", "partition-primary"} {
		code, out, errs := e2etest.Run(t, env, "drill", "--cluster", "t", "--fault", fault, "--cycles", "1", "--between", "300ms",
			"--vus", "2", "--read-vus", "1", "--detect-timeout", "1s", "--results", results)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", fault, code, out, errs)
		}
		for _, want := range []string{"detected s", "fenced s", "sync commit: 0 of ", "; detected after p50 ", "cluster at the end: whole:"} {
			if !strings.Contains(out, want) {
				t.Fatalf("%s: output lacks %q:\n%s", fault, want, out)
			}
		}
	}

	topo, err := cluster.Load(home, "t")
	if err != nil {
		t.Fatal(err)
	}
	f, err := topo.FreezeNode(context.Background(), topo.Primary().Name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Thaw()
	empty := t.TempDir()
	code, out, errs := e2etest.Run(t, env, "drill", "--cluster", "t", "--fault", "freeze-primary", "--cycles", "1", "--results", empty)
	if code != 2 || !strings.Contains(errs, "is frozen") || !strings.Contains(errs, "kill -CONT") {
		t.Fatalf("drill on a frozen primary: exit %d, stderr %q; want 2 saying how to resume it", code, errs)
	}
	e2etest.WantNothing(t, filepath.Join(empty, "*"))

	from := topo.Primary().Name
	code, out, errs = e2etest.Run(t, env, "cluster", "failover", "--name", "t", "--probe-timeout", "1s")
	if code != 0 || !strings.Contains(out, "did not answer: fenced") || !strings.Contains(out, "WAL ") {
		t.Fatalf("failover from a frozen primary: exit %d\n%s\n%s", code, out, errs)
	}
	if topo, err = cluster.Load(home, "t"); err != nil || topo.Primary().Name == from || len(topo.StoppedProcesses(from)) != 0 {
		t.Fatalf("after the failover: %v, primary %s, stopped processes of %s %v", err, topo.Primary().Name, from, topo.StoppedProcesses(from))
	}
	if code, _, errs = e2etest.Run(t, env, "cluster", "failover", "--name", "t", "--probe-timeout", "0s"); code != 2 || !strings.Contains(errs, "--probe-timeout") {
		t.Fatalf("--probe-timeout 0s: exit %d, %q; want 2", code, errs)
	}
}
