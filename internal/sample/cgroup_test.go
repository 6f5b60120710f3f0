package sample

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cgroup"
	"github.com/agbench/agbench/internal/result"
)

// A busy process in a group with a fifth of a core: the host sampler reports its CPU against
// the budget, the throttling, and the budgets, per node.
func TestHostStepSeesABusyGroupAgainstItsBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("makes control groups")
	}
	sys, err := cgroup.Detect()
	if err != nil {
		t.Skipf("no control groups: %v", err)
	}
	b := cgroup.Budget{CPUs: 0.2, Memory: 64 << 20}
	g, err := sys.Create("agbench-test-"+filepath.Base(t.TempDir()), b, sys.CPUSet(b, 0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Remove() })
	busy := exec.Command("sh", "-c", "while :; do :; done")
	if err := busy.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { busy.Process.Kill(); busy.Wait() })
	if err := g.Enter(busy.Process.Pid); err != nil {
		t.Fatal(err)
	}
	h, err := NewHostStep([]HostGroup{{Node: "primary", Group: g}}, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	st := &result.Step{}
	st.Window.Start = time.Now()
	if err := h.Start(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	// Wait until the group has been throttled at least once, however busy the machine.
	u0, _ := g.Read()
	for deadline := time.Now().Add(30 * time.Second); ; {
		u, err := g.Read()
		if err != nil {
			t.Fatal(err)
		}
		if u.Throttled > u0.Throttled && time.Since(st.Window.Start) > time.Second {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a busy loop on a fifth of a core was never throttled")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := h.Stop(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	c := st.Counters
	cores := c[result.HostName("primary", result.HostCPUCores)]
	if cores <= 0 || cores > 0.2*1.25 {
		t.Errorf("cpu cores %v on a 0.2-core budget", cores)
	}
	if c[result.HostName("primary", result.HostCPUBudget)] != 0.2 || c[result.HostName("primary", result.HostMemoryBudget)] != 64<<20 {
		t.Errorf("budgets: %v", c)
	}
	if v, ok := c[result.HostName("primary", result.HostThrottledShare)]; !ok || v <= 0 {
		t.Errorf("throttled share %v %v", v, ok)
	}
	if s, ok := st.Series[result.HostName("primary", result.HostCPUCores)]; !ok || len(s.V) == 0 {
		t.Errorf("no cpu series: %v", st.Series)
	}
}
