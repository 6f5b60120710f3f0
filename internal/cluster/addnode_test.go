package cluster_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

func slotExists(t *testing.T, topo *cluster.Topology, slot string) bool {
	t.Helper()
	var n int
	c := connect(t, topo, topo.Primary())
	if err := c.QueryRow(context.Background(), `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1`, slot).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

func TestPlanStandbyRefusesTakenOrBadNames(t *testing.T) {
	t.Parallel()
	topo := clustertest.Shared(t, clustertest.Options{Standbys: 2}) // planning makes nothing
	for _, name := range []string{"standby1", "standby2", "primary", "Bad-Name", "with-dash"} {
		if _, err := topo.PlanStandby(name); !agerr.IsBadInput(err) {
			t.Errorf("PlanStandby(%q) = %v, want bad input", name, err)
		}
	}
	n, err := topo.PlanStandby("")
	if err != nil || n.Name != "standby3" || n.Slot != "standby3" || n.Port <= topo.Node("standby2").Port {
		t.Fatalf("PlanStandby(\"\") = %+v, %v", n, err)
	}
	if _, err := os.Stat(n.DataDir); !os.IsNotExist(err) {
		t.Fatalf("planning made %s", n.DataDir)
	}
}

// addStandby adds a standby named name ("" picks one) by the steps seeding takes, filling
// its folder with pg_basebackup, and waits until it streams. The caller holds the lock.
func addStandby(t *testing.T, ctx context.Context, topo *cluster.Topology, name string) cluster.Node {
	t.Helper()
	n, err := topo.PlanStandby(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := topo.CreateSlot(ctx, n.Slot); err != nil {
		t.Fatal(err)
	}
	p := topo.Primary()
	cmd := topo.OSUser.Command(ctx, topo.PG.Path("pg_basebackup"), "-h", p.Host, "-p", fmt.Sprint(p.Port), "-U", topo.Superuser,
		"-D", n.DataDir, "-X", "stream", "-c", "fast", "-S", n.Slot, "--no-password")
	cmd.Env = append(cmd.Env, "PGPASSFILE="+topo.PassFile)
	if err := topo.OSUser.Own(filepath.Dir(n.DataDir)); err != nil {
		t.Fatal(err)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pg_basebackup: %v: %s", err, out)
	}
	if err := topo.StartStandby(ctx, &n); err != nil {
		t.Fatal(err)
	}
	if err := topo.JoinStandby(ctx, n); err != nil {
		t.Fatal(err)
	}
	if err := topo.WaitStreaming(ctx, n.Name, time.Minute); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAddStandbyStepsThenRemove(t *testing.T) {
	t.Parallel() // owns its cluster: it adds and removes a standby
	topo := clustertest.New(t, clustertest.Options{Standbys: 0})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	unlock, err := topo.Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	n := addStandby(t, ctx, topo, "extra")
	saved, err := cluster.LoadFile(filepath.Join(topo.Dir, "topology.json"))
	if err != nil || saved.Node("extra") == nil {
		t.Fatalf("saved topology lacks the new standby: %v", err)
	}
	if err := topo.RemoveStandby(ctx, n); err != nil {
		t.Fatal(err)
	}
	saved, _ = cluster.LoadFile(filepath.Join(topo.Dir, "topology.json"))
	if saved.Node("extra") != nil || topo.Node("extra") != nil {
		t.Fatal("removed standby still in the topology")
	}
	if slotExists(t, topo, "extra") {
		t.Fatal("slot left behind")
	}
	if _, err := os.Stat(n.DataDir); !os.IsNotExist(err) {
		t.Fatalf("data folder left behind: %v", err)
	}
}

func TestRemoveHalfMadeStandby(t *testing.T) {
	t.Parallel() // owns its cluster: it adds and removes a standby
	topo := clustertest.New(t, clustertest.Options{Standbys: 1, Commit: cluster.CommitSync})
	ctx := context.Background()
	n, err := topo.PlanStandby("")
	if err != nil {
		t.Fatal(err)
	}
	if err := topo.CreateSlot(ctx, n.Slot); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(n.DataDir, "base"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := topo.StartStandby(ctx, &n); err == nil {
		t.Fatal("started a standby from an empty folder")
	}
	if err := topo.RemoveStandby(ctx, n); err != nil {
		t.Fatal(err)
	}
	if slotExists(t, topo, n.Slot) {
		t.Fatal("slot left behind")
	}
	if _, err := os.Stat(n.DataDir); !os.IsNotExist(err) {
		t.Fatal("data folder left behind")
	}
	if len(topo.Nodes) != 2 {
		t.Fatalf("nodes: %v", topo.NodeNames())
	}
	if err := topo.RemoveStandby(ctx, *topo.Primary()); err == nil {
		t.Fatal("removed the primary")
	}
}
