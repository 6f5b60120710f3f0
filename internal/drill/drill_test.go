package drill

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
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
	topo := clustertest.New(t, clustertest.Options{Standbys: 1, Commit: cluster.CommitSync})
	for _, fault := range Faults {
		t.Run(fault, func(t *testing.T) {
			from := topo.Primary().Name
			run, res, err := drill(t, context.Background(), topo, Options{Fault: fault, Cycles: 1})
			if err != nil {
				t.Fatalf("drill: %v (%+v)", err, run)
			}
			t.Log(run.Verdict)
			dc := cycles(t, res)[0]
			if !dc.Checked || dc.Lost != 0 || dc.Acked == 0 {
				t.Fatalf("cycle: checked %v, %d of %d acknowledged commits lost: %v", dc.Checked, dc.Lost, dc.Acked, dc.Problems)
			}
			if dc.From != from || dc.To == from || len(dc.Writable) != 1 || dc.Writable[0] != dc.To {
				t.Fatalf("from %s to %s, writable %v", dc.From, dc.To, dc.Writable)
			}
			if dc.OldPrimary != "streaming" || dc.WriteBackSeconds == nil {
				t.Fatalf("old primary %q, writes back %v, problems %v", dc.OldPrimary, dc.WriteBackSeconds, dc.Problems)
			}
			if !strings.HasPrefix(run.Left, "whole:") || run.Lost != 0 || !strings.HasPrefix(run.Verdict, "sync commit: 0 of ") {
				t.Fatalf("left %q, verdict %q", run.Left, run.Verdict)
			}
		})
	}
}
