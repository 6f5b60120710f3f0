package drill

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/render"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/units"
)

// sink keeps the steps in the result, as internal/experiment's Recorder does.
type sink struct{ res *result.Result }

func (s *sink) AddStep(st result.Step) { s.res.Steps = append(s.res.Steps, st) }
func (s *sink) Save() error            { return nil }

func drill(t *testing.T, ctx context.Context, topo *cluster.Topology, o Options) (*result.DrillRun, *result.Result, error) {
	t.Helper()
	if o.Writers == 0 {
		o.Writers, o.Readers = 2, 1
	}
	if o.Between == 0 {
		o.Between = 500 * time.Millisecond
	}
	if o.CommitWait == 0 {
		o.CommitWait = DefaultCommitWait
	}
	if o.DetectTimeout == 0 {
		o.DetectTimeout = DefaultDetectTimeout
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := Check(topo, o); err != nil {
		t.Fatal(err)
	}
	res := &result.Result{}
	run, err := Run(ctx, topo, o, res, &sink{res}, t.Logf)
	return run, res, err
}

func cycles(t *testing.T, res *result.Result) []*result.DrillCycle {
	t.Helper()
	var out []*result.DrillCycle
	for i := range res.Steps {
		dc, err := res.Steps[i].DrillCycle()
		if err != nil || dc == nil {
			t.Fatalf("step %d: drill section %v, %v", i, dc, err)
		}
		out = append(out, dc)
	}
	return out
}

// TestSyncCommitLosesNothing injects each fault on a sync-commit cluster, fails over and
// heals: every acknowledged commit is on the new primary, one node accepts writes, and the
// old primary streams again.
func TestSyncCommitLosesNothing(t *testing.T) {
	t.Parallel() // owns its cluster: it fails over
	topo := clustertest.New(t, clustertest.Options{Standbys: 1, Commit: cluster.CommitSync})
	for _, fault := range Faults {
		if inPlace(fault) {
			continue // no failover: TestKillStandby
		}
		t.Run(fault, func(t *testing.T) {
			from := topo.Primary().Name
			run, res, err := drill(t, context.Background(), topo, Options{Fault: fault, Cycles: 1})
			if err != nil {
				t.Fatalf("drill: %v (%+v)", err, run)
			}
			t.Log(run.Verdict)
			dc := cycles(t, res)[0]
			if !dc.Checked || lostOf(dc) != 0 || dc.Acked == 0 {
				t.Fatalf("cycle: checked %v, %d of %d acknowledged commits lost: %v", dc.Checked, lostOf(dc), dc.Acked, dc.Problems)
			}
			if dc.From != from || dc.To == from || len(dc.Writable) != 1 || dc.Writable[0] != dc.To {
				t.Fatalf("from %s to %s, writable %v", dc.From, dc.To, dc.Writable)
			}
			if dc.OldPrimary != "streaming" || dc.WriteBackSeconds == nil {
				t.Fatalf("old primary %q, writes back %v, problems %v", dc.OldPrimary, dc.WriteBackSeconds, dc.Problems)
			}
			if fault != FaultPlanned && dc.WALBytesLacked == nil {
				t.Fatalf("WAL lacked not measured: %s", dc.WALBytesNote)
			}
			if silent := fault == FaultFreezePrimary || fault == FaultPartitionPrimary; silent != (dc.DetectSeconds != nil) || silent != (dc.FenceSeconds != nil) {
				t.Fatalf("%s: detected after %v, fenced after %v", fault, dc.DetectSeconds, dc.FenceSeconds)
			}
			if dc.OldAckedAfterPromotion != 0 {
				t.Fatalf("the old primary acknowledged %d writes after the promotion", dc.OldAckedAfterPromotion)
			}
			if !strings.HasPrefix(run.Left, "whole:") || run.Lost == nil || *run.Lost != 0 || !strings.HasPrefix(run.Verdict, "sync commit: 0 of ") {
				t.Fatalf("left %q, verdict %q", run.Left, run.Verdict)
			}
			// One synchronous standby: the new primary's only one is the old primary, so
			// writes are back when it rejoined, and the cycle and the verdict say so.
			if dc.SyncWait == "" || run.SyncWaitCycles != 1 || !strings.Contains(run.Verdict, "the new primary had no synchronous standby until the old primary rejoined") ||
				!slices.ContainsFunc(dc.Events, func(e result.DrillEvent) bool { return e.Event == result.EventRejoined }) {
				t.Fatalf("sync wait %q, %d cycles, verdict %q, events %v", dc.SyncWait, run.SyncWaitCycles, run.Verdict, dc.Events)
			}
			// agbench gives the new primary its synchronous settings before the promotion:
			// its sampled state never acknowledged a commit without a synchronous standby.
			if g := dc.SyncGap; g == nil || g.Note != "" || g.NoSyncSeconds == nil || *g.NoSyncSeconds != 0 || run.NoSyncCycles != 0 {
				t.Fatalf("sync gap %+v, %d cycles without a synchronous standby", g, run.NoSyncCycles)
			}
			t.Log(render.SyncGapSentence(dc.SyncGap))
		})
	}
}

// waitAcked waits until the cycle has acknowledged n more commits than it had.
func waitAcked(ctx context.Context, c *Cycle, n int64) error {
	from := c.Acked()
	for c.Acked() < from+n {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

// TestAsyncLossDetected makes acknowledged commits lost, honestly: on an async cluster the
// standby is stopped while the primary goes on acknowledging commits, the primary is killed,
// and the standby — a stale copy — is started and promoted. The drill must list the loss.
func TestAsyncLossDetected(t *testing.T) {
	t.Parallel() // owns its cluster: it fails over
	topo := clustertest.New(t, clustertest.Options{Standbys: 1})
	standby := topo.Standbys()[0].Name
	hooks := &Hooks{
		BeforeFault: func(ctx context.Context, c *Cycle) error {
			if err := topo.StopNode(ctx, standby); err != nil {
				return err
			}
			return waitAcked(ctx, c, 50)
		},
		BeforeFailover: func(ctx context.Context, c *Cycle) error { return topo.StartNode(ctx, standby) },
	}
	run, res, err := drill(t, context.Background(), topo, Options{Fault: FaultKillPrimary, Cycles: 1, Hooks: hooks})
	if err == nil || !strings.Contains(err.Error(), "acknowledged commits lost") {
		t.Fatalf("drill error %v; want the loss", err)
	}
	t.Log(run.Verdict)
	dc := cycles(t, res)[0]
	if !dc.Checked || lostOf(dc) < 50 || len(dc.LostIDs) == 0 || run.Lost == nil || *run.Lost != lostOf(dc) {
		t.Fatalf("lost %d (ids %d), run lost %d; want at least the 50 acknowledged while the standby was down", lostOf(dc), len(dc.LostIDs), *run.Lost)
	}
	if dc.WALBytesLacked == nil || *dc.WALBytesLacked == 0 {
		t.Fatalf("WAL lacked %v (%s); want the WAL written while the standby was down", dc.WALBytesLacked, dc.WALBytesNote)
	}
	if !strings.HasPrefix(run.Verdict, "async commit: "+units.GroupInt(lostOf(dc))+" of ") {
		t.Fatalf("verdict %q", run.Verdict)
	}
	if !strings.HasPrefix(run.Left, "whole:") || dc.OldPrimary != "streaming" {
		t.Fatalf("left %q, old primary %q", run.Left, dc.OldPrimary)
	}
}

// TestInterruptHeals cancels the drill right after the kill: the failover and the rejoin run
// to their end, the checks run, and the cluster is left whole.
func TestInterruptHeals(t *testing.T) {
	t.Parallel() // owns its cluster: it injects a fault
	topo := clustertest.New(t, clustertest.Options{Standbys: 1, Commit: cluster.CommitSync})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hooks := &Hooks{BeforeFailover: func(context.Context, *Cycle) error { cancel(); return nil }}
	run, res, err := drill(t, ctx, topo, Options{Fault: FaultKillPrimary, Cycles: 3, Hooks: hooks})
	if err == nil {
		t.Fatal("an interrupted drill returned no error")
	}
	if len(res.Steps) != 1 || res.Steps[0].Complete {
		t.Fatalf("%d steps, first complete %v; want one incomplete", len(res.Steps), len(res.Steps) > 0 && res.Steps[0].Complete)
	}
	dc := cycles(t, res)[0]
	if !dc.Checked || lostOf(dc) != 0 || len(dc.Writable) != 1 {
		t.Fatalf("checked %v, lost %d, writable %v", dc.Checked, lostOf(dc), dc.Writable)
	}
	if !strings.HasPrefix(run.Left, "whole:") {
		t.Fatalf("left %q", run.Left)
	}
}

// TestCheckRefusesAForeignProcess: a node whose postmaster.pid names a process that is not
// this cluster's postgres on that folder (here the test itself) gets no fault.
func TestCheckRefusesAForeignProcess(t *testing.T) {
	t.Parallel() // owns its cluster: it stops a standby
	topo := clustertest.New(t, clustertest.Options{Standbys: 1})
	s := topo.Standbys()[0]
	if err := topo.StopNode(context.Background(), s.Name); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(s.DataDir, "postmaster.pid")
	if err := os.WriteFile(pidFile, []byte(fmt.Sprintf("%d\n%s\n", os.Getpid(), s.DataDir)), 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(pidFile)
	err := Check(topo, Options{Fault: FaultKillPrimary})
	if !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "not this cluster's") {
		t.Fatalf("Check: %v; want bad input naming the foreign process", err)
	}
	if _, err := topo.OwnPostmaster(topo.Primary().Name); err != nil {
		t.Fatalf("the primary is the cluster's own: %v", err)
	}
}

// lostOf is a cycle's lost commits, -1 when it was not checked (absent).
func lostOf(dc *result.DrillCycle) int64 {
	l, _, ok := dc.LostChecked()
	if !ok {
		return -1
	}
	return l
}
