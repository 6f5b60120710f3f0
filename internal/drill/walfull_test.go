package drill

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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
	t.Parallel() // owns its cluster: it fills its WAL disk
	topo := clustertest.New(t, clustertest.Options{Standbys: 1, Commit: cluster.CommitSync})
	requireWALFull(t, topo)
	p := topo.Primary()
	before := walSettings(t, topo)
	run, res, err := drill(t, context.Background(), topo, Options{Fault: FaultWALFull, Cycles: 3, WALFSSize: DefaultWALFSSize})
	if err != nil {
		t.Fatalf("drill: %v (%+v)", err, run)
	}
	t.Log(run.Verdict)
	for _, dc := range cycles(t, res) {
		for _, e := range dc.Events {
			t.Logf("cycle %d: %+.3fs %s %s", dc.Cycle, e.At.Sub(dc.FaultAt).Seconds(), e.Event, e.Detail)
		}
		if !dc.Checked || lostOf(dc) != 0 || dc.Acked == 0 || !slices.Equal(dc.Writable, []string{p.Name}) || len(dc.NotStreaming) != 0 {
			t.Fatalf("cycle %d: checked %v, %d of %d lost, writable %v, not streaming %v: %v", dc.Cycle, dc.Checked, lostOf(dc), dc.Acked, dc.Writable, dc.NotStreaming, dc.Problems)
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
	if after := walSettings(t, topo); after != before {
		t.Fatalf("WAL settings %q after the drill, %q before", after, before)
	}
	for _, left := range []string{"walfs-" + p.Name, "walfs-" + p.Name + ".img"} {
		if _, err := os.Lstat(filepath.Join(topo.Dir, left)); err == nil {
			t.Fatalf("%s left in the cluster's folder", left)
		}
	}
}

// TestWALFullInterrupted cancels the drill as soon as the WAL file system is full: the space
// is freed, the primary takes writes again, the checks run, the WAL goes back into the data
// folder and the cluster is left whole.
func TestWALFullInterrupted(t *testing.T) {
	t.Parallel() // owns its cluster: it fills its WAL disk
	topo := clustertest.New(t, clustertest.Options{Standbys: 1, Commit: cluster.CommitSync})
	requireWALFull(t, topo)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hooks := &Hooks{BeforeFault: func(_ context.Context, c *Cycle) error {
		go func() {
			for {
				c.tally.mu.Lock()
				in := !c.tally.faultAt.IsZero()
				c.tally.mu.Unlock()
				if in {
					cancel()
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
		return nil
	}}
	run, res, err := drill(t, ctx, topo, Options{Fault: FaultWALFull, Cycles: 3, WALFSSize: DefaultWALFSSize, Hooks: hooks})
	if err == nil {
		t.Fatal("an interrupted drill returned no error")
	}
	if len(res.Steps) != 1 || res.Steps[0].Complete {
		t.Fatalf("%d steps; want one, incomplete", len(res.Steps))
	}
	dc := cycles(t, res)[0]
	if !dc.Checked || lostOf(dc) != 0 || !strings.HasSuffix(dc.Healed, "standbys streaming") {
		t.Fatalf("checked %v, lost %d, healed %q: %v", dc.Checked, lostOf(dc), dc.Healed, dc.Problems)
	}
	if !strings.HasPrefix(run.Left, "whole:") {
		t.Fatalf("left %q", run.Left)
	}
	fi, err := os.Lstat(filepath.Join(topo.Primary().DataDir, "pg_wal"))
	if err != nil || !fi.IsDir() {
		t.Fatalf("pg_wal after the drill: %v, %v", fi, err)
	}
}

// TestWALFullRefused: a primary whose pg_wal is a link already (a file system agbench did
// not make) gets no wal-full fault: bad input before any cycle, naming it; a size out of
// bounds is bad input too.
func TestWALFullRefused(t *testing.T) {
	t.Parallel() // owns its cluster: it moves the primary's pg_wal
	o := Options{Fault: FaultWALFull, Cycles: 1, Writers: 1, Between: time.Second, CommitWait: time.Second, WALFSSize: 1 << 20}
	if err := o.Validate(); !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "--wal-fs-size 1.0 MiB") {
		t.Fatalf("Validate: %v", err)
	}
	topo := clustertest.New(t, clustertest.Options{Standbys: 1})
	p := topo.Primary()
	if err := topo.StopNode(context.Background(), p.Name); err != nil {
		t.Fatal(err)
	}
	wal, elsewhere := filepath.Join(p.DataDir, "pg_wal"), filepath.Join(topo.Dir, "elsewhere")
	if err := os.Rename(wal, elsewhere); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, wal); err != nil {
		t.Fatal(err)
	}
	if err := topo.StartNode(context.Background(), p.Name); err != nil {
		t.Fatal(err)
	}
	o.WALFSSize = DefaultWALFSSize
	err := Check(topo, o)
	if !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "pg_wal is a link already") {
		t.Fatalf("Check: %v; want bad input naming the link", err)
	}
}

// walSettings are the primary's max_wal_size and min_wal_size, and where they come from.
func walSettings(t *testing.T, topo *cluster.Topology) string {
	t.Helper()
	c, err := topo.Connect(context.Background(), topo.Primary())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	var s string
	if err := c.QueryRow(context.Background(), `SELECT string_agg(name || '=' || setting || ' ' || source, ', ' ORDER BY name) FROM pg_settings WHERE name IN ('max_wal_size', 'min_wal_size')`).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestWALFullAfterMuchWAL runs wal-full on a primary whose pg_wal holds much WAL. First the
// WAL is needed (a replication slot holds it): the drill is refused before any cycle, naming
// the size, and the WAL settings it had lowered are back in effect on the running server
// (they were reset in postgresql.auto.conf but never reloaded). Then the same segments are
// only recycled ones (the slot dropped, a checkpoint renamed them ahead, as after agbench
// tpcc build): they are not copied onto the small file system, and the fault takes effect
// (copied, they left no room for it: refused, or the server went on writing into them).
func TestWALFullAfterMuchWAL(t *testing.T) {
	t.Parallel() // owns its cluster: it fills its WAL disk
	topo := clustertest.New(t, clustertest.Options{Standbys: 1})
	requireWALFull(t, topo)
	ctx := context.Background()
	c, err := topo.Connect(ctx, topo.Primary())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.Close(ctx) }()
	exec := func(sql string) {
		t.Helper()
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(`SELECT pg_create_physical_replication_slot('agbench_test_hold', true)`)
	exec(`CREATE TABLE w (i int)`)
	for i := 0; i < 8; i++ { // eight segments of WAL, 128 MiB: more than a 128 MiB file system leaves room for
		exec(`INSERT INTO w VALUES (1); SELECT pg_switch_wal()`)
	}
	before := walSettings(t, topo)
	_, _, err = drill(t, ctx, topo, Options{Fault: FaultWALFull, Cycles: 1, WALFSSize: DefaultWALFSSize})
	if !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "pg_wal holds") {
		t.Fatalf("drill with 128 MiB of WAL needed: %v; want refused", err)
	}
	if after := walSettings(t, topo); after != before {
		t.Fatalf("WAL settings in effect %q after the refused drill, %q before", after, before)
	}

	c.Close(ctx) // the refused drill restarted the primary
	if c, err = topo.Connect(ctx, topo.Primary()); err != nil {
		t.Fatal(err)
	}
	exec(`SELECT pg_drop_replication_slot('agbench_test_hold')`)
	// The standby's own slot holds WAL too until the standby, reconnected after the refused
	// drill's restart, has confirmed it: on a busy machine it was still six segments behind at
	// the checkpoint, and those 96 MiB were WAL the server needed. Wait for every slot to
	// reach the current segment first.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var caught bool
		if err := c.QueryRow(ctx, `SELECT coalesce(bool_and(pg_walfile_name(restart_lsn) = pg_walfile_name(pg_current_wal_lsn())), true)
			FROM pg_replication_slots WHERE restart_lsn IS NOT NULL`).Scan(&caught); err != nil {
			t.Fatal(err)
		}
		if caught {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the standby's slot did not reach the current WAL segment within 2m")
		}
		time.Sleep(50 * time.Millisecond)
	}
	exec(`CHECKPOINT`)
	run, res, err := drill(t, ctx, topo, Options{Fault: FaultWALFull, Cycles: 1, WALFSSize: DefaultWALFSSize})
	if err != nil {
		t.Fatalf("drill with recycled segments: %v (%+v)", err, run)
	}
	dc := cycles(t, res)[0]
	if dc.FaultMissed != "" || dc.WritesBlockedSeconds == nil || !slices.ContainsFunc(dc.Events, func(e result.DrillEvent) bool { return e.Event == result.EventDetected }) {
		t.Fatalf("fault missed %q, writes blocked %v, events %v", dc.FaultMissed, dc.WritesBlockedSeconds, dc.Events)
	}
}

// TPC-C's own errors are no sign of a full disk; the server's are.
func TestServerFault(t *testing.T) {
	for state, want := range map[string]bool{"53100": true, "08006": true, "57P03": true, "XX000": true, "58030": true, stateTimedOut: true, stateConnect: true,
		"40001": false, "40P01": false, "23505": false, "22012": false, stateClient: false} {
		if serverFault(state) != want {
			t.Errorf("serverFault(%q) = %v, want %v", state, !want, want)
		}
	}
}
