package cluster_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// A node whose postmaster died leaves postmaster.pid behind, and the system may give its pid
// to another process: stopping or destroying the cluster must leave that process alone.
func TestStaleLockFileNamesAnotherProcess(t *testing.T) {
	t.Parallel()
	topo := clustertest.New(t, clustertest.Options{Standbys: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sb := topo.Standbys()[0]
	if err := topo.StopNode(ctx, sb.Name); err != nil {
		t.Fatal(err)
	}
	other := exec.Command("sleep", "300")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- other.Wait() }()
	t.Cleanup(func() { _ = other.Process.Kill() })
	lock := fmt.Sprintf("%d\n%s\n", other.Process.Pid, sb.DataDir)
	if err := os.WriteFile(filepath.Join(sb.DataDir, "postmaster.pid"), []byte(lock), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := topo.StopNodeMode(ctx, sb.Name, "immediate"); err != nil {
		t.Errorf("stop a node that is not running: %v", err)
	}
	if err := topo.Destroy(ctx); err != nil {
		t.Errorf("destroy: %v", err)
	}
	select {
	case err := <-ended:
		t.Fatalf("the process that a stale postmaster.pid names was stopped: %v", err)
	default:
	}
}
