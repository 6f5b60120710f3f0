package drill

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
)

// requireWALFull skips the test where a wal-full fault cannot be injected (not root, no
// loop device): the drill refuses it there, which TestWALFullRefused shows.
func requireWALFull(t *testing.T, topo *cluster.Topology) {
	t.Helper()
	if errs := checkWALFull(topo); len(errs) > 0 {
		t.Skipf("wal-full cannot be injected here: %v", agerr.Join(errs...))
	}
}

// TestWALFull fills the primary's WAL file system on a sync-commit cluster: the server stops
// taking writes, the space is freed, it recovers in place, no acknowledged commit is lost,
// the standby streams again, and at the end its WAL is back in its data folder and the file
// system is gone.
func TestWALFull(t *testing.T) {
	topo := clustertest.New(t, clustertest.Options{Standbys: 1, Commit: cluster.CommitSync})
	requireWALFull(t, topo)
	p := topo.Primary()
	run, res, err := drill(t, context.Background(), topo, Options{Fault: FaultWALFull, Cycles: 2, WALFSSize: DefaultWALFSSize})
	if err != nil {
		t.Fatalf("drill: %v (%+v)", err, run)
	}
	t.Log(run.Verdict)
	for _, dc := range cycles(t, res) {
		for _, e := range dc.Events {
			t.Logf("cycle %d: %+.3fs %s %s", dc.Cycle, e.At.Sub(dc.FaultAt).Seconds(), e.Event, e.Detail)
		}
		if !dc.Checked || dc.Lost != 0 || dc.Acked == 0 || !slices.Equal(dc.Writable, []string{p.Name}) || len(dc.NotStreaming) != 0 {
			t.Fatalf("cycle %d: checked %v, %d of %d lost, writable %v, not streaming %v: %v", dc.Cycle, dc.Checked, dc.Lost, dc.Acked, dc.Writable, dc.NotStreaming, dc.Problems)
		}
		if !strings.HasSuffix(dc.Healed, "standbys streaming") || dc.WritesBlockedSeconds == nil || len(dc.Problems) != 0 {
			t.Fatalf("cycle %d: healed %q, writes blocked %v, problems %v", dc.Cycle, dc.Healed, dc.WritesBlockedSeconds, dc.Problems)
		}
		checkTimeline(t, dc, result.EventFault, result.EventDetected, result.EventHealed)
	}
	if !strings.HasPrefix(run.Left, "whole:") || !strings.HasPrefix(run.Verdict, "sync commit: 0 of ") {
		t.Fatalf("left %q, verdict %q", run.Left, run.Verdict)
	}
	fi, err := os.Lstat(filepath.Join(p.DataDir, "pg_wal"))
	if err != nil || !fi.IsDir() {
		t.Fatalf("pg_wal after the drill: %v, %v; want the data folder's own", fi, err)
	}
	for _, left := range []string{"walfs-" + p.Name, "walfs-" + p.Name + ".img"} {
		if _, err := os.Lstat(filepath.Join(topo.Dir, left)); err == nil {
			t.Fatalf("%s left in the cluster's folder", left)
		}
	}
}
