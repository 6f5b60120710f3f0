package drill

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/drill"
	"github.com/jackc/pgx/v5"
)

// `drill --fault observe` from the command line on a hand-made cluster (no agbench
// topology): the test fails it over by its own means once the drill's ledger exists; the
// table, the verdict and result.json follow.
func TestDrillObserveCommand(t *testing.T) {
	t.Parallel()
	h := clustertest.NewHandmade(t, 1)
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		for { // the drill's load runs once its ledger exists
			c, err := pgx.Connect(ctx, h.ConnString(0, clustertest.HandmadeAdmin))
			if err == nil {
				var n int64
				err = c.QueryRow(ctx, `SELECT count(*) FROM `+drill.LedgerTable).Scan(&n)
				c.Close(ctx)
				if err == nil && n > 0 {
					break
				}
			}
			if ctx.Err() != nil {
				done <- ctx.Err()
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err := h.Stop(ctx, 0); err != nil {
			done <- err
			return
		}
		done <- h.Promote(ctx, 1)
	}()
	results := t.TempDir()
	code, out, errs := e2etest.Run(t, map[string]string{"AGBENCH_HOME": t.TempDir()}, "drill", "--fault", "observe",
		"--primary", "old="+h.URL(0, clustertest.HandmadeAdmin), "--standby", "new="+h.URL(1, clustertest.HandmadeAdmin),
		"--cycles", "1", "--between", "300ms", "--vus", "2", "--read-vus", "1", "--observe-wait", "2m", "--results", results)
	if err := <-done; err != nil {
		t.Fatalf("the test's own failover: %v", err)
	}
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"async commit: 0 of ", "observe", "down", "by your own means"} {
		if !strings.Contains(out+errs, want) {
			t.Fatalf("output lacks %q:\n%s\n%s", want, out, errs)
		}
	}
	r := e2etest.ReadOneResult(t, results)
	if strings.Contains(strings.Join(r.Meta.Args, " "), clustertest.HandmadeAdminPW) {
		t.Fatalf("the password is in result.json's args: %v", r.Meta.Args)
	}
	if run, err := r.DrillRun(); err != nil || run == nil || run.CyclesDone != 1 || run.Lost != 0 {
		t.Fatalf("drill run %+v (%v)", run, err)
	}
}
