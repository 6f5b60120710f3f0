package drill

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/workload/tpcc"
)

// The tpcc workload's checks can fail: an acknowledged New-Order whose row is deleted behind
// the terminals' back (before a planned failover) is LOST and named, and the consistency
// conditions it breaks fail the cycle, named.
func TestTPCCLostOrderDetected(t *testing.T) {
	t.Parallel() // owns its cluster: it fails over
	topo := clustertest.New(t, clustertest.Options{Standbys: 1, Commit: cluster.CommitSync})
	ctx := context.Background()
	cfg, err := tpcc.ConnConfig(topo.ConnString(topo.Primary(), topo.Database), "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tpcc.Build(ctx, cfg, tpcc.BuildOptions{Warehouses: 1, Loaders: 1, Seed: 7, NoFunctions: true}); err != nil {
		t.Fatal(err)
	}
	var deleted order
	o := Options{Fault: FaultPlanned, Cycles: 1, Workload: WorkloadTPCC, Hooks: &Hooks{BeforeFault: func(ctx context.Context, c *Cycle) error {
		// The load runs on while this hook waits: on a busy machine the first New-Order can
		// be acknowledged after the load's first period. The order deleted is one the server
		// acknowledged: the tally's orders also hold those whose commit got no answer (in
		// doubt, a timeout under load), and one of those missing is no lost commit.
		for deadline := time.Now().Add(2 * time.Minute); deleted.o == 0; time.Sleep(10 * time.Millisecond) {
			c.tally.mu.Lock()
			if len(c.tally.acked) > 0 {
				deleted = c.tally.orders[c.tally.acked[0]]
			}
			c.tally.mu.Unlock()
			if deleted.o == 0 && time.Now().After(deadline) {
				return errors.New("no New-Order acknowledged in 2 minutes of load before the fault")
			}
		}
		conn, err := topo.Connect(ctx, topo.Primary())
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, `DELETE FROM tpcc.orders WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $3`, deleted.w, deleted.d, deleted.o)
		return err
	}}}
	run, res, err := drill(t, ctx, topo, o)
	if err == nil || run == nil {
		t.Fatalf("drill: %v, run %+v; want it failed", err, run)
	}
	dc := cycles(t, res)[0]
	if dc.TPCC == nil || lostOf(dc) != 1 || !slices.Equal(dc.TPCC.LostOrders, []string{deleted.String()}) {
		t.Fatalf("lost %d (tpcc %+v); want exactly %s; errors %+v", lostOf(dc), dc.TPCC, deleted, dc.Errors)
	}
	if run.ChecksFailed != 1 || !strings.Contains(strings.Join(run.Failed, "; "), "consistency condition 3.3.2.") ||
		!strings.Contains(run.Verdict, "1 of ") || !strings.Contains(run.Verdict, "consistency checks FAILED") {
		t.Fatalf("run %+v", run)
	}
	t.Log(run.Verdict, run.Failed)
}
