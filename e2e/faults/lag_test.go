package faults

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
)

// lagIdle is how long the primary commits nothing before the run.
const lagIdle = 8 * time.Second

// lagTolerance is how far, beyond the uncertainty the run states (replay_lag_within_s: the
// interval of the primary's position readings around the moment it left the standby's
// position, 100 ms on a quiet machine, more when the sampler is read late), the lag an
// ordinary login's run reports may be from pg_stat_replication's at the window's end; it
// is far below the idle time the old estimate counted (lagIdle).
const lagTolerance = 0.5

// An ordinary login (no pg_monitor) runs writes on a hand-made cluster whose primary was idle
// and whose standby holds back the commits it replays: stress's table has the standby's lag as a column,
// said to come from WAL positions, and it is the superuser's pg_stat_replication.replay_lag
// at the window's end (the estimate before it counted the idle time: 3 to 5 times too much,
// and was in no column).
func TestLagColumnOfAnOrdinaryLogin(t *testing.T) {
	t.Parallel() // owns its cluster: it holds back the standby's replay
	clustertest.Require(t)
	h := clustertest.NewHandmade(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	prim, stby, watch := h.Admin(ctx, t, 0), h.Admin(ctx, t, 1), h.Admin(ctx, t, 0)
	defer prim.Close(context.Background())
	defer stby.Close(context.Background())
	defer watch.Close(context.Background())
	for _, q := range []string{"CREATE TABLE w (id bigserial PRIMARY KEY, v text)", "GRANT ALL ON w, w_id_seq TO " + clustertest.HandmadeApp} {
		if _, err := prim.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	// The idle period: the standby's last replayed commit grows old.
	for {
		var idle bool
		if err := stby.QueryRow(ctx, "SELECT coalesce(clock_timestamp() - pg_last_xact_replay_timestamp() > $1::interval, false)", lagIdle.String()).Scan(&idle); err != nil {
			t.Fatal(err)
		}
		if idle {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the standby kept replaying commits")
		case <-time.After(200 * time.Millisecond):
		}
	}
	// The standby holds back every commit for a minute (what it replays before the run's
	// first commit, agbench's reads' WAL among it, it replays at once), so that the run's
	// writes leave it behind from their start.
	setDelay := func(ctx context.Context, d string) {
		for _, q := range []string{"ALTER SYSTEM SET recovery_min_apply_delay = '" + d + "'", "SELECT pg_reload_conf()"} {
			if _, err := stby.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		for {
			var now string
			if err := stby.QueryRow(ctx, "SELECT current_setting('recovery_min_apply_delay')").Scan(&now); err != nil {
				t.Fatal(err)
			}
			if now == d {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	setDelay(ctx, "1min")
	defer setDelay(context.Background(), "0")

	theirs := clustertest.WatchReplayLag(ctx, t, watch)
	code, out, errs := e2etest.Run(t, map[string]string{"AGBENCH_HOME": t.TempDir()}, "stress",
		"--primary", "east="+h.URL(0, clustertest.HandmadeApp), "--standby", "west="+h.URL(1, clustertest.HandmadeApp),
		"-q", "INSERT INTO w (v) SELECT repeat('x', 200) FROM generate_series(1, 200)", "--iterations", "0", "--duration", "4s",
		"--results", t.TempDir())
	theirs.Stop()
	t.Logf("stdout:\n%s", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	res := e2etest.PrintedResult(t, out)
	st := res.Steps[0]
	// pg_stat_replication's lag at the window's end: replay stays held back.
	lag, known := theirs.At(st.Window.End)
	if !known {
		t.Fatalf("no pg_stat_replication lag read within 1 s before the window's end: %d reads", theirs.Reads())
	}
	ours, ok := st.Counters[result.PGStandbyName("east", "west", result.PGReplayLagSeconds)]
	within := st.Counters[result.PGStandbyName("east", "west", result.PGReplayLagWithin)]
	t.Logf("window's end: app %.2f ±%.2f s (%v), pg_stat_replication %.2f s (window %.1f s after %v idle)", ours, within, ok, lag, st.Window.Seconds(), lagIdle)
	if !ok || math.Abs(ours-lag) > lagTolerance+within {
		t.Errorf("lag %.2f s (%v), pg_stat_replication's %.2f s", ours, ok, lag)
	}
	for _, w := range []string{"west lag s", "west lag from " + result.LagFromPositions} {
		if !strings.Contains(out, w) {
			t.Errorf("stdout lacks %q", w)
		}
	}
}
