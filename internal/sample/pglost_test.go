package sample

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
)

// A standby stopped between two steps: the next window still samples the primary, the
// stopped node's loss is told when the window closes, and closing the sampler after it
// does not pull a session from under a loop still running (it panicked: Start returned
// the standby's error, the runner took the sampler for not started and never stopped it,
// and Close closed the primary's session under its loop).
func TestPGSamplerStandbyStoppedBetweenSteps(t *testing.T) {
	t.Parallel() // owns its cluster: it stops a node
	clustertest.Require(t)
	topo := clustertest.New(t, clustertest.Options{Standbys: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	prim, stby := topo.Primary(), topo.Standbys()[0]
	p, err := NewPG(ctx, []PGNode{{prim.Name, topo.ConnString(prim, "")}, {stby.Name, topo.ConnString(stby, "")}},
		PGOptions{Interval: 100 * time.Millisecond, WaitInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	st := &result.Step{Window: result.Window{Start: time.Now()}}
	if err := p.Start(ctx, st); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(ctx, st); err != nil {
		t.Fatal(err)
	}
	if err := topo.StopNode(ctx, stby.Name); err != nil {
		t.Fatal(err)
	}
	st2 := &result.Step{Window: result.Window{Start: time.Now()}}
	if err := p.Start(ctx, st2); err != nil {
		t.Fatalf("a sampler that still reads the primary did not start: %v", err)
	}
	err = p.Stop(ctx, st2)
	if err == nil || !strings.Contains(err.Error(), "node "+stby.Name) {
		t.Errorf("Stop: %v, want the stopped standby named", err)
	}
	if _, ok := st2.Counters[result.PGName(prim.Name, "commits_per_s")]; !ok {
		t.Errorf("the second window lost the primary's figures: %v", st2.Counters)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Logf("close: %v", err)
	}
}
