package cluster_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cgroup"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
)

// requireIO skips a test that limits IO where the machine has no IO controller.
func requireIO(t *testing.T) *cgroup.System {
	t.Helper()
	s := requireHosts(t)
	if s.IORoot == "" {
		t.Skip("no blkio/io controller here")
	}
	return s
}

// A modelled cluster with IO limits: each node's group holds them on the disk of the
// cluster's data, the status shows them, and a node's direct reads are held to its read
// limit by the kernel's count of the bytes its group read (never more than the limit times
// the time taken, plus one throttle slice, however loaded the machine is). Destroy removes
// the groups from the blkio hierarchy too.
func TestModelledHostIOLimitHoldsANodesReads(t *testing.T) {
	s := requireIO(t)
	const limit = 2 << 20
	topo := clustertest.New(t, clustertest.Options{Standbys: 1, Name: "hio", Host: cgroup.Budget{CPUs: 0.5, CPUShares: cgroup.AutoCPUShares, ReadBPS: limit, WriteIOPS: 1000}})
	dev, err := cgroup.DeviceOf(topo.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if h := topo.Hosts; h.ReadBPS != limit || h.WriteIOPS != 1000 || h.IODevice == nil || *h.IODevice != *dev || h.CPUShares != cgroup.SharesFor(0.5) {
		t.Fatalf("host model %+v (device %+v), want reads %d on %v and the automatic CPU weight", h, h.IODevice, limit, dev)
	}
	if !strings.Contains(topo.Hosts.String(), "reads 2 MiB/s, writes 1000 IOPS") {
		t.Errorf("host model in words: %s", topo.Hosts)
	}
	n := topo.Node("standby1")
	if s.Version == 1 {
		b, err := os.ReadFile(filepath.Join(n.Group.IO, "blkio.throttle.read_bps_device"))
		if err != nil || strings.TrimSpace(string(b)) != fmt.Sprintf("%s %d", dev, limit) {
			t.Fatalf("read_bps_device %q %v", b, err)
		}
	}
	procs, err := readProcsOf(n.Group.IO)
	if err != nil || !slices.Contains(procs, postmaster(t, n)) {
		t.Fatalf("the standby's postmaster is not in its IO group: %v %v", procs, err)
	}
	// 4 MiB of the standby's WAL, read directly by a process in the standby's group.
	wal, _ := filepath.Glob(filepath.Join(n.DataDir, "pg_wal", "0000000*"))
	if len(wal) == 0 {
		t.Fatal("no WAL segment")
	}
	const size = 4 << 20
	before, err := n.Group.Read()
	if err != nil {
		t.Fatal(err)
	}
	dd := exec.Command("dd", "if="+wal[0], "of=/dev/null", "bs=64k", "count=64", "iflag=direct", "status=none")
	start := time.Now()
	if err := n.Group.Start(dd); err != nil {
		t.Fatal(err)
	}
	if err := dd.Wait(); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start).Seconds()
	after, err := n.Group.Read()
	if err != nil {
		t.Fatal(err)
	}
	read := after.IO.ReadBytes - before.IO.ReadBytes
	if read < size {
		t.Fatalf("the standby's group read %d bytes, want at least %d", read, size)
	}
	if allowed := limit * (took + 0.2); float64(read) > allowed {
		t.Fatalf("the standby's group read %d bytes in %.2fs: more than its %d B/s allows (%.0f)", read, took, limit, allowed)
	}
	st := topo.Status(context.Background())
	for _, ns := range st.Nodes {
		if ns.Budget == nil || ns.Budget.IO == nil || ns.Budget.IO.ReadBPS != limit || ns.Budget.IOUse == nil {
			t.Errorf("status of %s: %+v", ns.Name, ns.Budget)
		}
	}
	if err := topo.Destroy(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{n.Group.IO, topo.Primary().Group.IO} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Fatalf("destroy left %s: %v", d, err)
		}
	}
}

func readProcsOf(dir string) ([]int, error) {
	g := &cgroup.Group{Dirs: []string{dir}}
	return g.Procs()
}

// A standby added to a modelled cluster gets a group of its own with the cluster's budget,
// its server runs in it, and both removing the standby and destroying the cluster remove
// the groups. A second modelled cluster made meanwhile does not pin its primary where the
// first one's is, and the status names the groups a node shares CPUs with.
func TestAddedStandbyGetsItsOwnHostAndTwoClustersSpreadTheirPrimaries(t *testing.T) {
	s := requireHosts(t)
	b := cgroup.Budget{CPUs: 0.4, Memory: 256 << 20}
	topo := clustertest.New(t, clustertest.Options{Name: "hadd", Host: b, Settings: map[string]string{"shared_buffers": "32MB"}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	unlock, err := topo.Lock()
	if err != nil {
		t.Fatal(err)
	}
	n := addStandby(t, ctx, topo, "")
	unlock()
	p := topo.Primary()
	g := topo.Node(n.Name).Group
	if g == nil || g.Budget != topo.Hosts.Budget || g.Name == p.Group.Name {
		t.Fatalf("added standby's group %+v, want its own with the budget %+v", g, topo.Hosts.Budget)
	}
	procs, err := g.Procs()
	if err != nil || !slices.Contains(procs, postmaster(t, topo.Node(n.Name))) {
		t.Fatalf("the added standby's postmaster is not in its group: %v %v", procs, err)
	}
	// The groups a placement weighed, but for these clusters' own: other tests' (of this
	// machine's other packages, or other checkouts) come and go while this one runs, and
	// move its nodes (a list read when the test began was no guide to them). Own groups are
	// known by their clusters' folders too: another checkout's run of this very test has
	// clusters of the same names, whose groups are others here.
	own := []string{cluster.GroupPrefix(topo.Dir, topo.Name)}
	others := func(g *cgroup.Group) []string {
		var out []string
		for _, name := range g.Beside {
			if !slices.ContainsFunc(own, func(p string) bool { return strings.HasPrefix(name, p) }) {
				out = append(out, name)
			}
		}
		return out
	}
	if !slices.Contains(g.Beside, p.Group.Name) {
		t.Errorf("the added standby's placement did not weigh the primary's group %s: %v", p.Group.Name, g.Beside)
	}
	if len(others(g)) == 0 && len(others(p.Group)) == 0 && g.CPUList == p.Group.CPUList {
		t.Errorf("the added standby was pinned with the primary to CPU %s", g.CPUList)
	}
	// A second cluster: its primary away from the first's (when no one else's groups were
	// there to weigh), and the status says whom it shares CPUs with.
	second := clustertest.New(t, clustertest.Options{Name: "hadd2", Host: b, Settings: map[string]string{"shared_buffers": "32MB"}})
	own = append(own, cluster.GroupPrefix(second.Dir, second.Name))
	if sp := second.Primary().Group; len(others(sp)) == 0 && len(others(p.Group)) == 0 && sp.CPUList == p.Group.CPUList {
		t.Errorf("both clusters' primaries pinned to CPU %s (beside %v)", p.Group.CPUList, sp.Beside)
	}
	// The status names, of the groups sharing a CPU with it, at least the first cluster's
	// (another checkout's groups come and go; with them the placement may have put both of
	// the first cluster's nodes on the other CPU, and then no group of its need be named).
	st := second.Status(context.Background())
	sp := second.Primary().Group
	nb := st.Nodes[0].Budget.Neighbours
	if slices.Contains(nb, sp.Name) {
		t.Errorf("status names the node's own group among its neighbours: %v", nb)
	}
	for _, node := range topo.Nodes {
		if node.Group == nil {
			continue
		}
		shares := slices.ContainsFunc(node.Group.CPUs(), func(c int) bool { return slices.Contains(sp.CPUs(), c) })
		if shares != slices.Contains(nb, node.Group.Name) {
			t.Errorf("%s on CPU %s, %s on CPU %s: status names neighbours %v", node.Group.Name, node.Group.CPUList, sp.Name, sp.CPUList, nb)
		}
	}
	if err := topo.RemoveStandby(ctx, *topo.Node(n.Name)); err != nil {
		t.Fatal(err)
	}
	if g.Exists() {
		t.Fatalf("removing the standby left its group %s", g.Name)
	}
	if err := topo.Destroy(context.Background()); err != nil {
		t.Fatal(err)
	}
	if left := groupsOf(t, s, homeOf(topo), "hadd"); len(left) > 0 {
		t.Fatalf("destroy left groups: %v", left)
	}
}

// cgroupFile reads one of a group's files, trimmed.
func cgroupFile(t *testing.T, dir, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// Lifting a modelled cluster's budgets while it runs leaves each node in its group, counting
// its use, but the kernel's files hold it to nothing: no quota, every CPU, the default CPU
// weight, no memory limit, no IO rule. The topology (as saved) and the status say so.
// Putting them back writes the budget again. A cluster without a host model is refused as
// bad input.
func TestLiftedBudgetsOnlyCountAndComeBack(t *testing.T) {
	s := requireHosts(t)
	b := cgroup.Budget{CPUs: 0.5, CPUShares: cgroup.SharesFor(0.5), Memory: 192 << 20}
	if s.IORoot != "" {
		b.ReadBPS = 2 << 20
	}
	topo := clustertest.New(t, clustertest.Options{Name: "hlift", Host: b, Settings: map[string]string{"shared_buffers": "32MB"}})
	p := topo.Primary()
	g := p.Group
	var dev string
	if g.IODevice != nil {
		dev = g.IODevice.String()
	}
	type state struct{ quota, cpus, weight, memory, io string }
	read := func() state {
		if s.Version == 1 {
			st := state{quota: cgroupFile(t, g.CPU, "cpu.cfs_quota_us"), cpus: cgroupFile(t, filepath.Join(s.Roots["cpuset"], g.Name), "cpuset.cpus"),
				weight: cgroupFile(t, g.CPU, "cpu.shares"), memory: cgroupFile(t, g.Memory, "memory.limit_in_bytes")}
			if g.IO != "" {
				st.io = cgroupFile(t, g.IO, "blkio.throttle.read_bps_device")
			}
			return st
		}
		st := state{quota: cgroupFile(t, g.CPU, "cpu.max"), cpus: cgroupFile(t, g.CPU, "cpuset.cpus"), weight: cgroupFile(t, g.CPU, "cpu.weight"),
			memory: cgroupFile(t, g.Memory, "memory.max")}
		if g.IO != "" {
			st.io = cgroupFile(t, g.IO, "io.max")
		}
		return st
	}
	budgeted := read()
	if err := topo.SetBudgets(false); err != nil {
		t.Fatal(err)
	}
	lifted := read()
	cpusOf := func(list string) []int {
		cpus, err := result.ParseCPUList(list)
		if err != nil {
			t.Fatalf("cpuset %q: %v", list, err)
		}
		return cpus
	}
	all := slices.Equal(cpusOf(lifted.cpus), s.CPUs)
	if s.Version == 1 {
		mem, _ := strconv.ParseInt(lifted.memory, 10, 64)
		if lifted.quota != "-1" || lifted.weight != "1024" || mem < 1<<50 || !all || lifted.io != "" {
			t.Fatalf("lifted, the primary's group holds %+v; want no quota, weight 1024, no memory limit, CPUs %v, no IO rule", lifted, s.CPUs)
		}
	} else if !strings.HasPrefix(lifted.quota, "max ") || lifted.weight != "100" || lifted.memory != "max" || !all ||
		(dev != "" && !strings.Contains(lifted.io, "rbps=max")) {
		t.Fatalf("lifted, the primary's group holds %+v", lifted)
	}
	procs, err := g.Procs()
	if err != nil || !slices.Contains(procs, postmaster(t, p)) {
		t.Fatalf("lifted, the postmaster left its group: %v %v", procs, err)
	}
	saved, err := cluster.LoadFile(filepath.Join(topo.Dir, "topology.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !saved.Hosts.Lifted || saved.Hosts.Enforced() || saved.Primary().Group.Budget != (cgroup.Budget{}) || saved.Hosts.Budget != b {
		t.Fatalf("saved topology after lifting: hosts %+v, primary's group budget %+v", saved.Hosts, saved.Primary().Group.Budget)
	}
	if !strings.HasPrefix(saved.Hosts.String(), "budgets lifted") {
		t.Errorf("host model in words: %s", saved.Hosts)
	}
	st := topo.Status(context.Background())
	if h := st.Nodes[0].Budget; h == nil || h.CPUs != 0 || h.Memory != 0 || h.IO != nil {
		t.Errorf("status of a lifted node: %+v", h)
	}
	if err := topo.SetBudgets(true); err != nil {
		t.Fatal(err)
	}
	// The CPUs are chosen anew (other clusters' groups may have come meanwhile): as many.
	back := read()
	if len(cpusOf(back.cpus)) != len(cpusOf(budgeted.cpus)) {
		t.Fatalf("put back on CPUs %s; made on %s", back.cpus, budgeted.cpus)
	}
	back.cpus = budgeted.cpus
	if back != budgeted {
		t.Fatalf("put back, the primary's group holds %+v; made with %+v", back, budgeted)
	}
	if topo.Hosts.Lifted || g.Budget != b {
		t.Fatalf("put back: hosts %+v, group budget %+v", topo.Hosts, g.Budget)
	}
	plain := clustertest.New(t, clustertest.Options{Name: "hplain"})
	if err := plain.SetBudgets(false); !agerr.IsBadInput(err) {
		t.Fatalf("lifting the budgets of a cluster without them: %v, want bad input", err)
	}
}
