package cgroup

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/proc"
)

// This machine's mountinfo, as the issue describes it: v1 hierarchies and a cgroup2 mount
// that offers no cpu, memory or io controller.
const v1Mountinfo = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`

func mounts(t *testing.T, s string) []Mount {
	t.Helper()
	m, err := ParseMountinfo(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLayoutV1WithAV2MountWithoutControllers(t *testing.T) {
	s, err := layout(mounts(t, v1Mountinfo), func(string) []string { return []string{"pids"} })
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != 1 || s.Roots["cpu"] != "/sys/fs/cgroup/cpu" || s.Roots["cpuacct"] != "/sys/fs/cgroup/cpuacct" ||
		s.Roots["memory"] != "/sys/fs/cgroup/memory" || s.Roots["cpuset"] != "/sys/fs/cgroup/cpuset" {
		t.Fatalf("%+v", s)
	}
}

func TestLayoutComountedCPUAndCPUAcct(t *testing.T) {
	m := mounts(t, `32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
`)
	s, err := layout(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Roots["cpu"] != "/sys/fs/cgroup/cpu,cpuacct" || s.Roots["cpuacct"] != s.Roots["cpu"] {
		t.Fatalf("%+v", s.Roots)
	}
}

func TestLayoutPrefersV2WithControllers(t *testing.T) {
	m := mounts(t, `30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate
`)
	s, err := layout(m, func(string) []string { return []string{"cpuset", "cpu", "io", "memory", "pids"} })
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != 2 || s.Roots["memory"] != "/sys/fs/cgroup" {
		t.Fatalf("%+v", s)
	}
}

func TestLayoutMissingControllerIsBadInputNamingIt(t *testing.T) {
	m := mounts(t, `30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw
`)
	_, err := layout(m, func(string) []string { return []string{"cpu", "pids"} })
	if !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "cpuset, memory") || !strings.Contains(err.Error(), "subtree_control") {
		t.Fatalf("%v", err)
	}
	// v1 with memory missing.
	m = mounts(t, strings.ReplaceAll(v1Mountinfo, "rw,memory", "rw,hugetlb"))
	_, err = layout(m, func(string) []string { return nil })
	if !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "memory control-group") {
		t.Fatalf("%v", err)
	}
}

func TestMountinfoEscapes(t *testing.T) {
	m := mounts(t, `32 31 0:29 / /sys/fs/a\040b rw - cgroup cgroup rw,cpu
`)
	if m[0].Point != "/sys/fs/a b" {
		t.Fatalf("%q", m[0].Point)
	}
	if _, err := ParseMountinfo(strings.NewReader("garbage\n")); err == nil {
		t.Fatal("a line without ' - ' was read")
	}
}

func TestCheckAndCPUSet(t *testing.T) {
	s := &System{Version: 1, CPUs: []int{0, 1}, MemTotal: 4 << 30}
	if err := s.Check(Budget{CPUs: 0.6, Memory: 1 << 30}, 2); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		b    Budget
		n    int
		want string
	}{
		{Budget{CPUs: 3}, 1, "has 2 CPU(s)"},
		{Budget{CPUs: 0.8}, 3, "would share CPUs"},
		{Budget{CPUs: 0.001}, 1, "smallest budget"},
		{Budget{Memory: 3 << 30}, 2, "more than this machine's"},
	} {
		err := s.Check(c.b, c.n)
		if !agerr.IsBadInput(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v x%d: %v", c.b, c.n, err)
		}
	}
	// Hosts of under one core each get CPUs of their own, in turn.
	if p := s.Place(Budget{CPUs: 0.6}, []string{"primary", "standby1"}, nil); !slices.Equal(p[0], []int{0}) || !slices.Equal(p[1], []int{1}) {
		t.Fatalf("%v", p)
	}
	if p := s.Place(Budget{CPUs: 1.5}, []string{"primary"}, nil); !slices.Equal(p[0], []int{0, 1}) {
		t.Fatalf("%v", p)
	}
	if p := s.Place(Budget{Memory: 1 << 30}, []string{"primary"}, nil); !slices.Equal(p[0], []int{0, 1}) {
		t.Fatalf("no CPU budget: %v", p)
	}
}

// A second modelled cluster does not pin its primary where the first one's is: the CPUs
// are chosen by the budgets already pinned there, then by the node names already there.
func TestPlaceConsidersOtherGroups(t *testing.T) {
	s := &System{Version: 1, CPUs: []int{0, 1}}
	first := []Neighbour{{Name: "agbench-a-1234abcd-primary", CPUs: []int{0}, Cores: 0.6},
		{Name: "agbench-a-1234abcd-standby1", CPUs: []int{1}, Cores: 0.6}}
	p := s.Place(Budget{CPUs: 0.6}, []string{"primary", "standby1"}, first)
	if !slices.Equal(p[0], []int{1}) || !slices.Equal(p[1], []int{0}) {
		t.Fatalf("second cluster placed %v: want its primary on CPU 1, away from the first's", p)
	}
	// A busier CPU is avoided whatever the names: here CPU 0 carries a whole core.
	busy := []Neighbour{{Name: "agbench-b-99-standby1", CPUs: []int{0}}}
	if p := s.Place(Budget{CPUs: 0.6}, []string{"standby1"}, busy); !slices.Equal(p[0], []int{1}) {
		t.Fatalf("%v", p)
	}
	if n := (Neighbour{Name: "agbench-a-1234abcd-standby1"}); n.Node() != "standby1" {
		t.Fatal(n.Node())
	}
}

func FuzzParseMountinfo(f *testing.F) {
	f.Add(v1Mountinfo)
	f.Add(`32 31 0:29 / /a\040b rw - cgroup cgroup rw,cpu` + "\n")
	f.Fuzz(func(t *testing.T, s string) {
		ms, err := ParseMountinfo(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, m := range ms {
			if m.FSType != "cgroup" && m.FSType != "cgroup2" {
				t.Fatalf("%+v", m)
			}
		}
		layout(ms, func(string) []string { return nil })
	})
}

// requireRoot skips a test that makes real control groups when it cannot.
func requireRoot(t *testing.T) *System {
	t.Helper()
	if testing.Short() {
		t.Skip("makes control groups; skipped with -short")
	}
	s, err := Detect()
	if err != nil {
		if os.Getenv("AGBENCH_REQUIRE_CGROUP") == "1" {
			t.Fatal(err)
		}
		t.Skipf("no control groups here: %v", err)
	}
	return s
}

func TestGroupHoldsItsProcessAndIsRemoved(t *testing.T) {
	s := requireRoot(t)
	// Named by the test process too: t.TempDir's base ("001") is the same in every run, and a
	// test binary of another package or checkout running at once must not share (and remove,
	// killing what runs in it) the group.
	name := fmt.Sprintf("%stest-%d-%s", GroupPrefix, os.Getpid(), filepath.Base(t.TempDir()))
	g, err := s.Create(name, Budget{CPUs: 0.5, Memory: 64 << 20}, s.Place(Budget{CPUs: 0.5}, []string{"x"}, nil)[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Remove() })
	if s.Version == 1 {
		if q := readString(t, filepath.Join(g.CPU, "cpu.cfs_quota_us")); q != "50000" {
			t.Fatalf("quota %s", q)
		}
		if m := readString(t, filepath.Join(g.Memory, "memory.limit_in_bytes")); m != "67108864" {
			t.Fatalf("memory limit %s", m)
		}
	} else if q := readString(t, filepath.Join(g.CPU, "cpu.max")); q != "50000 100000" {
		t.Fatalf("quota %s", q)
	}
	// SetCPUs changes the quota the kernel holds, and 0 lifts it.
	for _, c := range []struct {
		cpus   float64
		v1, v2 string
	}{{0.02, "2000", "2000 100000"}, {0, "-1", "max 100000"}, {0.5, "50000", "50000 100000"}} {
		if err := g.SetCPUs(c.cpus); err != nil {
			t.Fatal(err)
		}
		if s.Version == 1 {
			if q := readString(t, filepath.Join(g.CPU, "cpu.cfs_quota_us")); q != c.v1 {
				t.Fatalf("SetCPUs(%v): quota %s, want %s", c.cpus, q, c.v1)
			}
		} else if q := readString(t, filepath.Join(g.CPU, "cpu.max")); q != c.v2 {
			t.Fatalf("SetCPUs(%v): cpu.max %s, want %s", c.cpus, q, c.v2)
		}
	}
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if err := g.Enter(cmd.Process.Pid); err != nil {
		cmd.Process.Kill()
		t.Fatal(err)
	}
	procs, err := g.Procs()
	if err != nil || !slices.Contains(procs, cmd.Process.Pid) || slices.Contains(procs, os.Getpid()) {
		t.Fatalf("procs %v (%v): want %d and not the test's own %d", procs, err, cmd.Process.Pid, os.Getpid())
	}
	for _, d := range g.Dirs {
		got, _ := proc.Host.CgroupProcs(d)
		if !slices.Contains(got, cmd.Process.Pid) {
			t.Fatalf("%s: %v", d, got)
		}
	}
	// (A process moved in brings no memory charge with it under v1: only errors matter here.)
	u, err := g.Read()
	if err != nil {
		t.Fatalf("%+v %v", u, err)
	}
	// Remove kills what runs in the group, then removes it everywhere.
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	<-done
	if g.Exists() {
		t.Fatalf("group %s still exists", name)
	}
	if err := g.Remove(); err != nil {
		t.Fatalf("removing a removed group: %v", err)
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
