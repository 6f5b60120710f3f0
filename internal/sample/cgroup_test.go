package sample

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cgroup"
	"github.com/agbench/agbench/internal/result"
)

// A busy process in a group with a fiftieth of a core: the host sampler reports its CPU
// against the budget, the throttling, and the budgets, per node. The budget is that small so
// that the quota bites however starved the machine is: a busy loop that gets even a few
// hundredths of a core exceeds it and is throttled.
func TestHostStepSeesABusyGroupAgainstItsBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("makes control groups")
	}
	sys, err := cgroup.Detect()
	if err != nil {
		t.Skipf("no control groups: %v", err)
	}
	const cpus = 0.02
	b := cgroup.Budget{CPUs: cpus, Memory: 64 << 20}
	// Named by the test process too: t.TempDir's base ("001") is the same in every run, and a
	// test binary of another package or checkout running at once must not share (and remove,
	// killing what runs in it) the group.
	g, err := sys.Create(fmt.Sprintf("%stest-%d-%s", cgroup.GroupPrefix, os.Getpid(), filepath.Base(t.TempDir())), b, sys.Place(b, []string{"test"}, nil)[0], nil)
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
	if procs, err := g.Procs(); err != nil || !slices.Contains(procs, busy.Process.Pid) {
		t.Fatalf("the busy loop %d is not in the group: %v %v", busy.Process.Pid, procs, err)
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
	started := time.Now()
	// Wait until the group has been throttled at least once, and for two seconds, so that
	// the accounting's edges are small against the window.
	u0, _ := g.Read()
	for deadline := time.Now().Add(100 * time.Second); ; {
		u, err := g.Read()
		if err != nil {
			t.Fatal(err)
		}
		if u.Throttled > u0.Throttled && time.Since(started) > 2*time.Second {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a busy loop on a fiftieth of a core was never throttled: %+v -> %+v", u0, u)
		}
		time.Sleep(50 * time.Millisecond)
	}
	window := time.Since(started).Seconds() // no longer than the sampler's window
	if err := h.Stop(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	c := st.Counters
	cores := c[result.HostName("primary", result.HostCPUCores)]
	// The quota allows cpus per period, with slack for the window's edges: two periods'
	// quota, and 20 ms for a scheduler tick's overrun and runtime handed out in slices.
	if limit := cpus + (2*cpus*cgroup.Period/1e6+0.02)/window; cores <= 0 || cores > limit {
		t.Errorf("cpu cores %v on a %v-core budget (at most %.3f in %.2f s)", cores, cpus, limit, window)
	}
	if c[result.HostName("primary", result.HostCPUBudget)] != cpus || c[result.HostName("primary", result.HostMemoryBudget)] != 64<<20 {
		t.Errorf("budgets: %v", c)
	}
	if v, ok := c[result.HostName("primary", result.HostThrottledShare)]; !ok || v <= 0 {
		t.Errorf("throttled share %v %v", v, ok)
	}
	if s, ok := st.Series[result.HostName("primary", result.HostCPUCores)]; !ok || len(s.V) == 0 {
		t.Errorf("no cpu series: %v", st.Series)
	}
}

// A group that limits reads: the host sampler reports the reads against the limit, by the
// kernel's count of the group's IO, and records the limit.
func TestHostStepSeesReadsAgainstTheIOBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("makes control groups")
	}
	sys, err := cgroup.Detect()
	if err != nil || sys.IORoot == "" {
		t.Skipf("no IO controller: %v", err)
	}
	dir := t.TempDir()
	dev, err := cgroup.DeviceOf(dir)
	if err != nil {
		t.Skipf("%v", err)
	}
	file := filepath.Join(dir, "data")
	if out, err := exec.Command("dd", "if=/dev/urandom", "of="+file, "bs=1M", "count=3", "conv=fsync", "status=none").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	const limit = 1 << 20
	b := cgroup.Budget{ReadBPS: limit, ReadIOPS: 1000}
	g, err := sys.Create(fmt.Sprintf("%stest-io-%d-%s", cgroup.GroupPrefix, os.Getpid(), filepath.Base(dir)), b, sys.CPUs, dev)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Remove() })
	h, err := NewHostStep([]HostGroup{{Node: "standby1", Group: g}}, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	st := &result.Step{}
	if err := h.Start(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	dd := exec.Command("dd", "if="+file, "of=/dev/null", "bs=64k", "iflag=direct", "status=none")
	if err := g.Start(dd); err != nil {
		t.Fatal(err)
	}
	if err := dd.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := h.Stop(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	c := st.Counters
	read := c[result.HostName("standby1", result.HostReadBPS)]
	if read <= 0 || read > limit*1.25 {
		t.Errorf("reads %.0f B/s against a %d B/s budget", read, limit)
	}
	if c[result.HostName("standby1", result.HostReadBPSBudget)] != limit || c[result.HostName("standby1", result.HostReadIOPSBudget)] != 1000 {
		t.Errorf("budgets: %v", c)
	}
	if _, ok := c[result.HostName("standby1", result.HostWriteBPSBudget)]; ok {
		t.Errorf("a write budget recorded where none was set: %v", c)
	}
	if s, ok := st.Series[result.HostName("standby1", result.HostReadBPS)]; !ok || len(s.V) == 0 {
		t.Errorf("no read series: %v", st.Series)
	}
}
