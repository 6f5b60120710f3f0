package tpcc

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/workload"
)

// TestMonitorServesTerminals drives the monitor's servers as the runner does, on a real
// server, with keying and think times scaled down: every request is answered for the
// terminal that made it, measured from its submission; a second step starts the terminals
// again on a fresh queue; and the window's figures are written as the step's section.
func TestMonitorServesTerminals(t *testing.T) {
	t.Parallel()
	topo := clustertest.Shared(t, clustertest.Options{})
	db := clustertest.OwnDatabase(t, topo)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg, err := ConnConfig(topo.ConnString(topo.Primary(), db), "--primary")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(ctx, cfg, BuildOptions{Warehouses: 1, Loaders: 1, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	w := &Workload{Primary: cfg, Mode: ModeFunctions, Seed: 5, Terminals: 30, ThinkScale: 0.002}
	if _, err := w.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	for step := range 2 {
		ops := runServers(t, ctx, w, 3, 1500*time.Millisecond)
		if ops < 30 {
			t.Errorf("step %d: %d transactions served for 30 terminals", step, ops)
		}
		if w.mon.open != 0 || w.mon.started || w.mon.terms != nil {
			t.Fatalf("step %d: monitor not stopped: open %d, started %v", step, w.mon.open, w.mon.started)
		}
	}
	end := time.Now()
	st := &result.Step{VUs: 3, Window: result.Window{Start: end.Add(-time.Minute), End: end},
		Ops: map[string]*result.Op{NewOrder.String(): {Count: 120}}}
	if err := w.mon.write(st); err != nil {
		t.Fatal(err)
	}
	ts, err := st.Terminals()
	if err != nil || ts == nil {
		t.Fatalf("section %v, %v", ts, err)
	}
	if ts.Terminals != 30 || ts.Sessions != 3 || ts.TpmC != 120 || ts.TpmCPerWarehouse != 120 || ts.QueueWait["*"].Count == 0 {
		t.Errorf("section: %d terminals, %d sessions, tpmC %v (%v per warehouse), %d queue waits",
			ts.Terminals, ts.Sessions, ts.TpmC, ts.TpmCPerWarehouse, ts.QueueWait["*"].Count)
	}
}

// runServers makes n servers of w's monitor and runs them for d as the runner's VUs do
// (each operation measured, as in a window that lasts the step, is tallied);
// it checks each operation and returns how many there were.
func runServers(t *testing.T, ctx context.Context, w *Workload, n int, d time.Duration) int {
	t.Helper()
	var servers []workload.Worker
	for i := range n {
		s, err := w.NewWorker(ctx, workload.VU{ID: i, Of: n, Seed: int64(i)})
		if err != nil {
			t.Fatal(err)
		}
		servers = append(servers, s)
	}
	stepCtx, stop := context.WithTimeout(ctx, d)
	defer stop()
	var mu sync.Mutex
	ops := 0
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for stepCtx.Err() == nil {
				var op workload.Op
				err := s.Do(stepCtx, &op)
				if stepCtx.Err() != nil {
					return
				}
				if err != nil || op.Name == "" || op.Submitted.IsZero() || op.Submitted.After(time.Now()) {
					t.Errorf("op %+v, %v", op, err)
					return
				}
				s.(workload.Tallier).Tally(&op, false)
				mu.Lock()
				ops++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, s := range servers {
		s.(workload.Closer).Close()
	}
	return ops
}
