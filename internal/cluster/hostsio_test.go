package cluster_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cgroup"
	"github.com/agbench/agbench/internal/cluster/clustertest"
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
	others := s.Neighbours()
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
	if len(others) == 0 && g.CPUList == p.Group.CPUList {
		t.Errorf("the added standby was pinned with the primary to CPU %s", g.CPUList)
	}
	// A second cluster: its primary away from the first's (when no one else's groups were
	// there to weigh), and the status says whom it shares CPUs with.
	second := clustertest.New(t, clustertest.Options{Name: "hadd2", Host: b, Settings: map[string]string{"shared_buffers": "32MB"}})
	if len(others) == 0 && second.Primary().Group.CPUList == p.Group.CPUList {
		t.Errorf("both clusters' primaries pinned to CPU %s", p.Group.CPUList)
	}
	st := second.Status(context.Background())
	if nb := st.Nodes[0].Budget.Neighbours; len(nb) == 0 || slices.Contains(nb, second.Primary().Group.Name) {
		t.Errorf("status names neighbours %v", nb)
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
	if left := groupsOf(t, s, "hadd"); len(left) > 0 {
		t.Fatalf("destroy left groups: %v", left)
	}
}
