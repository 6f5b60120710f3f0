package experiment

import (
	"context"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/runner"
	"github.com/agbench/agbench/internal/target"
	"github.com/agbench/agbench/internal/workload/tpcc"
)

// TestTPCCTerminalsWaitsAreResponses runs terminals through the runner on one session, its
// queue always full, with a ramp-up: the window opens and closes while requests wait and
// one is served. The queue waits are those of the very transactions whose response times
// the runner measured, kind by kind (as many, each quantile no higher than the response's),
// however the window cut the stream of requests.
func TestTPCCTerminalsWaitsAreResponses(t *testing.T) {
	t.Parallel()
	topo := clustertest.Shared(t, clustertest.Options{})
	db := clustertest.OwnDatabase(t, topo)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs := topo.ConnString(topo.Primary(), db)
	cfg, err := tpcc.ConnConfig(cs, "--primary")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tpcc.Build(ctx, cfg, tpcc.BuildOptions{Warehouses: 1, Loaders: 1, Seed: 6}); err != nil {
		t.Fatal(err)
	}
	w := &tpcc.Workload{Primary: cfg, Mode: tpcc.ModeFunctions, Seed: 6, Keying: true, Terminals: 40, ThinkScale: 0.001}
	if _, err := w.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	smp, err := w.NewSampler(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer smp.Close()
	l := &Load{Command: "tpcc run", Target: &target.Target{Topo: topo, Primary: cs}, Database: db, Intent: target.ReadWrite,
		Sweep: runner.Sweep{Axes: []runner.Axis{{Name: "vus", Values: []string{"1"}}}, Seed: 6},
		Step:  runner.StepSpec{Rampup: 300 * time.Millisecond, Duration: 1500 * time.Millisecond}, Samplers: []runner.Sampler{smp}}
	out, err := runLoad(t, ctx, l, w, func(runner.Progress) {})
	if err != nil {
		t.Fatal(err)
	}
	st := out.Result.Steps[0]
	ts, err := st.Terminals()
	if err != nil || ts == nil {
		t.Fatalf("terminals section %v, %v", ts, err)
	}
	all := int64(0)
	for _, k := range tpcc.Kinds {
		q, op := ts.QueueWait[k.String()], st.Ops[k.String()]
		var n int64
		if op != nil {
			n = op.Count
		}
		all += n
		if q.Count != n {
			t.Errorf("%s: %d queue waits, %d response times: not the same transactions", k, q.Count, n)
			continue
		}
		if n == 0 {
			continue
		}
		r := op.Latency
		for _, p := range [][2]int64{{q.Min, r.Min}, {q.P50, r.P50}, {q.P90, r.P90}, {q.P99, r.P99}, {q.Max, r.Max}} {
			if p[0] > p[1] {
				t.Errorf("%s: queue wait %+v above response time %+v", k, q, r)
				break
			}
		}
	}
	if all == 0 || ts.QueueWait["*"].Count != all {
		t.Errorf("%d queue waits in all, %d transactions answered", ts.QueueWait["*"].Count, all)
	}
}
