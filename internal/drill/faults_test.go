package drill

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// TestAsyncPartitionLosesIsolatedWrites: with async commit, the primary cut off from its
// standbys goes on acknowledging the writes of the clients that still reach it; once it is
// fenced and a standby promoted, those commits are lost, and the drill says so honestly.
func TestAsyncPartitionLosesIsolatedWrites(t *testing.T) {
	t.Parallel() // owns its cluster: it partitions the primary
	topo := clustertest.New(t, clustertest.Options{Standbys: 1})
	hooks := &Hooks{BeforeFailover: func(ctx context.Context, c *Cycle) error { return waitAcked(ctx, c, 30) }}
	run, res, err := drill(t, context.Background(), topo, Options{Fault: FaultPartitionPrimary, Cycles: 1, Hooks: hooks})
	if err == nil || !strings.Contains(err.Error(), "acknowledged commits lost") {
		t.Fatalf("drill error %v; want the loss", err)
	}
	t.Log(run.Verdict)
	dc := cycles(t, res)[0]
	if !dc.Checked || dc.OldAcked < 30 || lostOf(dc) < 30 || dc.OldAckedAfterPromotion != 0 {
		t.Fatalf("old primary acknowledged %d after the cut (%d after the promotion), %d lost; want at least the 30 acknowledged while cut off, lost, none after",
			dc.OldAcked, dc.OldAckedAfterPromotion, lostOf(dc))
	}
	if dc.WALBytesLacked == nil || *dc.WALBytesLacked == 0 {
		t.Fatalf("WAL lacked %v (%s); want the WAL the isolated primary wrote", dc.WALBytesLacked, dc.WALBytesNote)
	}
	if !strings.HasPrefix(run.Left, "whole:") || dc.OldPrimary != "streaming" {
		t.Fatalf("left %q, old primary %q", run.Left, dc.OldPrimary)
	}
	assertDirect(t, topo)
}

// assertDirect checks that every standby streams from the primary directly, not through a
// relay the drill left behind.
func assertDirect(t *testing.T, topo *cluster.Topology) {
	t.Helper()
	p := topo.Primary()
	for _, s := range topo.Standbys() {
		c, err := topo.Connect(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		var port int
		err = c.QueryRow(context.Background(), `SELECT sender_port FROM pg_stat_wal_receiver WHERE status = 'streaming'`).Scan(&port)
		c.Close(context.Background())
		if err != nil || port != p.Port {
			t.Fatalf("%s streams from port %d (%v); want %s's %d", s.Name, port, err, p.Name, p.Port)
		}
	}
}

// TestSplitBrainDetected makes a split brain: after the cut, a standby is promoted without
// fencing the old primary, which clients still reach and which goes on acknowledging their
// writes. The checks must fail with both writable nodes named, and the writes the old
// primary acknowledged after the promotion counted.
func TestSplitBrainDetected(t *testing.T) {
	t.Parallel() // owns its cluster: it makes a second primary
	topo := clustertest.New(t, clustertest.Options{Standbys: 1})
	// The writers try the nodes in the topology's order; with the old primary second, the
	// ones whose session the test ends find the promoted standby first.
	if _, err := topo.Failover(context.Background(), cluster.FailoverOptions{}); err != nil {
		t.Fatal(err)
	}
	old, standby := topo.Primary(), topo.Standbys()[0]
	var cyc *Cycle
	hooks := &Hooks{
		BeforeFailover: func(ctx context.Context, c *Cycle) error { cyc = c; return nil },
		Failover: func(ctx context.Context, topo *cluster.Topology) (*cluster.FailoverReport, error) {
			if err := sqlOn(ctx, topo, standby, `SELECT pg_promote()`); err != nil {
				return nil, err
			}
			r := &cluster.FailoverReport{From: old.Name, To: standby.Name, OldPrimary: "not fenced"}
			r.PromotedAt = nowAfterWritable(ctx, t, topo, standby)
			if err := waitAcked(ctx, cyc, 20); err != nil { // on the old primary: the writers are there
				return nil, err
			}
			return r, sqlOn(ctx, topo, old, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'agbench-drill'`)
		},
	}
	run, res, err := drill(t, context.Background(), topo, Options{Fault: FaultPartitionPrimary, Cycles: 2, Hooks: hooks})
	if err == nil || agerr.ExitCode(err) != 1 {
		t.Fatalf("drill error %v (exit %d); want the failed checks, exit 1", err, agerr.ExitCode(err))
	}
	if len(res.Steps) != 1 {
		t.Fatalf("%d cycles ran; want the drill to stop after the split brain", len(res.Steps))
	}
	dc := cycles(t, res)[0]
	both := "2 nodes accept writes (" + strings.Join([]string{topo.Nodes[0].Name, topo.Nodes[1].Name}, ", ") + ")"
	if len(dc.Writable) != 2 || !strings.Contains(strings.Join(dc.Problems, "; "), both) {
		t.Fatalf("writable %v, problems %v; want %q", dc.Writable, dc.Problems, both)
	}
	if dc.OldAckedAfterPromotion < 20 || !strings.Contains(strings.Join(run.Failed, "; "), "split brain: "+old.Name+" acknowledged") {
		t.Fatalf("old primary acknowledged %d after the promotion; failed %v", dc.OldAckedAfterPromotion, run.Failed)
	}
	if !strings.Contains(run.Left, "split brain") {
		t.Fatalf("left %q; want the split brain named", run.Left)
	}
}

func sqlOn(ctx context.Context, topo *cluster.Topology, n *cluster.Node, sql string) error {
	c, err := topo.Connect(ctx, n)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, sql)
	return err
}

// nowAfterWritable waits until n accepts writes (pg_promote waits for it too) and returns when.
func nowAfterWritable(ctx context.Context, t *testing.T, topo *cluster.Topology, n *cluster.Node) (at time.Time) {
	for {
		c, err := topo.Connect(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		var rec bool
		err = c.QueryRow(ctx, `SELECT pg_is_in_recovery()`).Scan(&rec)
		c.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !rec {
			return time.Now()
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestInterruptBeforeFailoverUndoesTheFault: Ctrl-C after the fault, before the failover,
// stops the fault: a frozen primary is resumed, a cut link healed and replication routed
// directly again; the primary stays primary and the cluster is whole.
func TestInterruptBeforeFailoverUndoesTheFault(t *testing.T) {
	t.Parallel() // owns its cluster: it injects faults
	topo := clustertest.New(t, clustertest.Options{Standbys: 1, Commit: cluster.CommitSync})
	for _, fault := range []string{FaultFreezePrimary, FaultPartitionPrimary} {
		t.Run(fault, func(t *testing.T) {
			from := topo.Primary().Name
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			hooks := &Hooks{BeforeFailover: func(context.Context, *Cycle) error { cancel(); return nil }}
			run, res, err := drill(t, ctx, topo, Options{Fault: fault, Cycles: 2, Hooks: hooks})
			if err == nil {
				t.Fatal("an interrupted drill returned no error")
			}
			if len(res.Steps) != 1 || res.Steps[0].Complete {
				t.Fatalf("%d steps; want one, incomplete", len(res.Steps))
			}
			if dc := cycles(t, res)[0]; dc.To != "" || dc.FaultAt.IsZero() {
				t.Fatalf("fault at %v, failed over to %q; want the fault undone, no failover", dc.FaultAt, dc.To)
			}
			if topo.Primary().Name != from || !strings.HasPrefix(run.Left, "whole: primary "+from) {
				t.Fatalf("primary %s, left %q; want %s whole", topo.Primary().Name, run.Left, from)
			}
			if pids := topo.StoppedProcesses(from); len(pids) != 0 {
				t.Fatalf("processes %v of %s still stopped", pids, from)
			}
			assertDirect(t, topo)
		})
	}
}

// TestCheckRefusesAFrozenNode: a node whose processes are stopped (a drill killed while it
// had frozen the primary) gets no fault, and the cluster is not whole; both say how to
// resume it.
func TestCheckRefusesAFrozenNode(t *testing.T) {
	t.Parallel() // owns its cluster: it freezes a node
	topo := clustertest.New(t, clustertest.Options{Standbys: 1})
	pid, err := topo.OwnPostmaster(topo.Primary().Name)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGCONT)
	for {
		if len(topo.StoppedProcesses(topo.Primary().Name)) > 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	err = Check(topo, Options{Fault: FaultFreezePrimary})
	if !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "kill -CONT "+strconv.Itoa(pid)) {
		t.Fatalf("Check: %v; want bad input saying to resume %d", err, pid)
	}
	if left := Whole(context.Background(), topo); !strings.HasPrefix(left, "not whole:") || !strings.Contains(left, "is frozen") || !strings.Contains(left, "kill -CONT "+strconv.Itoa(pid)) {
		t.Fatalf("Whole: %q; want the frozen node and how to resume it", left)
	}
}
