package drill

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
	for _, want := range []string{"async commit: 0 of ", "observe", "down", "by your own means", "cycle 1: fault timed from when old stopped answering"} {
		if !strings.Contains(out+errs, want) {
			t.Fatalf("output lacks %q:\n%s\n%s", want, out, errs)
		}
	}
	r := e2etest.ReadOneResult(t, results)
	if strings.Contains(strings.Join(r.Meta.Args, " "), clustertest.HandmadeAdminPW) {
		t.Fatalf("the password is in result.json's args: %v", r.Meta.Args)
	}
	if run, err := r.DrillRun(); err != nil || run == nil || run.CyclesDone != 1 || run.Lost == nil || *run.Lost != 0 {
		t.Fatalf("drill run %+v (%v)", run, err)
	}
}

// observe's targets are checked like every other command's, before anything is made: a
// login the server refuses is bad input naming the server and the login, and a standby
// given as --primary is refused naming the node and that it is in recovery. Neither leaves
// a result folder or a ledger table.
func TestDrillObserveChecksItsTargets(t *testing.T) {
	t.Parallel()
	h := clustertest.NewHandmade(t, 1)
	wrongPW := strings.Replace(h.URL(0, clustertest.HandmadeApp), clustertest.HandmadeAppPW, "not-the-password", 1)
	for _, c := range []struct {
		name          string
		primary, stby string
		want          []string
	}{
		{"wrong password", "old=" + wrongPW, "new=" + h.URL(1, clustertest.HandmadeApp),
			[]string{"--primary old", fmt.Sprintf("127.0.0.1:%d", h.Ports[0]), "login app", "refused the login"}},
		{"standby as primary", "new=" + h.URL(1, clustertest.HandmadeApp), "old=" + h.URL(0, clustertest.HandmadeApp),
			[]string{"--primary new", "in recovery", "pg_is_in_recovery()"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			results := t.TempDir()
			code, out, errs := e2etest.Run(t, map[string]string{"AGBENCH_HOME": t.TempDir()}, "drill", "--fault", "observe",
				"--primary", c.primary, "--standby", c.stby, "--cycles", "1", "--between", "300ms", "--observe-wait", "5s", "--results", results)
			t.Logf("exit %d\n%s%s", code, out, errs)
			if code != 2 {
				t.Fatalf("exit %d, want 2 (bad input)", code)
			}
			for _, w := range c.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q", w)
				}
			}
			if strings.Contains(errs, "not-the-password") {
				t.Errorf("the password is in the message")
			}
			e2etest.WantNothing(t, filepath.Join(results, "*"))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c := h.Admin(ctx, t, 0)
			defer c.Close(ctx)
			var made bool
			if err := c.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, drill.LedgerTable).Scan(&made); err != nil || made {
				t.Fatalf("ledger table made: %v (%v)", made, err)
			}
		})
	}
}

// A cycle that was not checked (no failover within --observe-wait) measured no loss: the
// run's sums and the cycle's lost commits are absent from result.json, never 0, and the
// report's cards say "–" with the reason.
func TestDrillObserveUncheckedIsAbsent(t *testing.T) {
	t.Parallel()
	h := clustertest.NewHandmade(t, 1)
	results := t.TempDir()
	code, out, errs := e2etest.Run(t, map[string]string{"AGBENCH_HOME": t.TempDir()}, "drill", "--fault", "observe",
		"--primary", "old="+h.URL(0, clustertest.HandmadeApp), "--standby", "new="+h.URL(1, clustertest.HandmadeApp),
		"--cycles", "1", "--between", "300ms", "--vus", "2", "--read-vus", "1", "--observe-wait", "1s", "--results", results)
	t.Logf("exit %d\n%s%s", code, out, errs)
	if code != 1 || !strings.Contains(out, "not judged: no cycle of observe was checked") {
		t.Fatalf("exit %d, want 1 and not judged", code)
	}
	r := e2etest.ReadOneResult(t, results)
	var run, cycle map[string]json.RawMessage
	if err := json.Unmarshal(r.Extra["drill"], &run); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(r.Steps[0].Extra["drill"], &cycle); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"acked", "lost", "in_doubt", "in_doubt_present"} {
		if v, ok := run[k]; ok {
			t.Errorf("the run's %s is %s, want absent (no cycle checked)", k, v)
		}
	}
	for _, k := range []string{"lost", "in_doubt_present"} {
		if v, ok := cycle[k]; ok {
			t.Errorf("the unchecked cycle's %s is %s, want absent", k, v)
		}
	}
	html := filepath.Join(t.TempDir(), "r.html")
	if code, _, errs := e2etest.Run(t, nil, "report", results, "-o", html, "-q"); code != 0 {
		t.Fatalf("report: exit %d %s", code, errs)
	}
	page, _ := os.ReadFile(html)
	for _, want := range []string{
		`<div class="k-label">acknowledged commits lost</div><div class="k-value">–</div><div class="k-note">not measured: no cycle was checked; not checked: cycle 1 (no failover from old within 1s (--observe-wait))`,
		`<div class="k-label">in doubt</div><div class="k-value">–</div>`,
		`cycle 1: observe — not checked: no failover from old within 1s (--observe-wait)`,
	} {
		if !strings.Contains(string(page), want) {
			i := strings.Index(string(page), `class="kpis"`)
			t.Errorf("the report lacks %q; its cards:\n%s", want, string(page)[i:min(len(page), i+1500)])
		}
	}
}
