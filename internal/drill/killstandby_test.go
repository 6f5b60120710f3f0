package drill

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
)

// TestKillStandby kills a standby's postmaster on sync-commit clusters, with one synchronous
// standby and with ANY 1 of two: no failover, the standby started again and streaming at
// the end of the cycle, no acknowledged commit lost, one writable node (the same primary),
// and the time without an acknowledged write measured with the cycle's timeline and events.
func TestKillStandby(t *testing.T) {
	t.Parallel()
	for _, standbys := range []int{1, 2} {
		t.Run(map[int]string{1: "one sync standby", 2: "ANY 1 of two"}[standbys], func(t *testing.T) {
			t.Parallel() // each owns its cluster: it kills a standby
			topo := clustertest.New(t, clustertest.Options{Standbys: standbys, Commit: cluster.CommitSync})
			primary := topo.Primary().Name
			run, res, err := drill(t, context.Background(), topo, Options{Fault: FaultKillStandby, Cycles: standbys})
			if err != nil {
				t.Fatalf("drill: %v (%+v)", err, run)
			}
			t.Log(run.Verdict)
			for i, dc := range cycles(t, res) {
				for _, e := range dc.Events {
					t.Logf("cycle %d: %+.3fs %s %s", dc.Cycle, e.At.Sub(dc.FaultAt).Seconds(), e.Event, e.Detail)
				}
				t.Logf("cycle %d: writes blocked %.3fs", dc.Cycle, *dc.WritesBlockedSeconds)
				want := topo.Standbys()[i].Name // the standbys in turn
				if dc.Target != want || dc.Healed != "streaming" || dc.To != "" || dc.FailoverSeconds != nil {
					t.Fatalf("cycle %d: killed %q healed %q, to %q; want %s killed and streaming, no failover", dc.Cycle, dc.Target, dc.Healed, dc.To, want)
				}
				if !dc.Checked || lostOf(dc) != 0 || dc.Acked == 0 || len(dc.NotStreaming) != 0 {
					t.Fatalf("cycle %d: checked %v, %d of %d lost, not streaming %v: %v", dc.Cycle, dc.Checked, lostOf(dc), dc.Acked, dc.NotStreaming, dc.Problems)
				}
				if !slices.Equal(dc.Writable, []string{primary}) || topo.Primary().Name != primary {
					t.Fatalf("cycle %d: writable %v; want the same primary %s", dc.Cycle, dc.Writable, primary)
				}
				if dc.WritesBlockedSeconds == nil || dc.WriteBackSeconds == nil {
					t.Fatalf("cycle %d: writes blocked %v, back %v; want both measured", dc.Cycle, dc.WritesBlockedSeconds, dc.WriteBackSeconds)
				}
				checkTimeline(t, dc, result.EventFault, result.EventDetected, result.EventHealed, result.EventWritesBack)
			}
			if !strings.HasPrefix(run.Left, "whole:") || !strings.Contains(run.Verdict, "writes blocked p50") ||
				!strings.HasPrefix(run.Verdict, "sync commit: 0 of ") || run.WritesBlockedMax == nil {
				t.Fatalf("left %q, verdict %q", run.Left, run.Verdict)
			}
		})
	}
}

// checkTimeline checks a cycle's timeline (every series as long, writes counted as acked) and
// that its events hold the wanted ones, in time order.
func checkTimeline(t *testing.T, dc *result.DrillCycle, want ...string) {
	t.Helper()
	tl := dc.Timeline
	if tl == nil || tl.IntervalMS != 100 || len(tl.Writes) == 0 {
		t.Fatalf("cycle %d: timeline %+v", dc.Cycle, tl)
	}
	n := len(tl.Writes)
	if len(tl.WriteErrors) != n || len(tl.Reads) != n || len(tl.ReadErrors) != n {
		t.Fatalf("cycle %d: series of %d, %d, %d, %d intervals", dc.Cycle, n, len(tl.WriteErrors), len(tl.Reads), len(tl.ReadErrors))
	}
	var sum int64
	for _, w := range tl.Writes {
		sum += w
	}
	if sum != dc.Acked {
		t.Fatalf("cycle %d: the timeline counts %d acknowledged writes, the cycle %d", dc.Cycle, sum, dc.Acked)
	}
	var got []string
	for i, e := range dc.Events {
		if i > 0 && e.At.Before(dc.Events[i-1].At) {
			t.Fatalf("cycle %d: events out of order: %+v", dc.Cycle, dc.Events)
		}
		got = append(got, e.Event)
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Fatalf("cycle %d: events %v lack %q", dc.Cycle, got, w)
		}
	}
}
