package sample

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
)

// lagTolerance is how far, beyond the uncertainty the figure states (replay_lag_within_s:
// the interval of the primary's readings around the moment it left the standby's position,
// 100 ms on a quiet machine, more when the sampler is read late), the lag an ordinary login
// measures from positions may be from pg_stat_replication's replay_lag at the same moment:
// half a round trip on each side, and the moment of the standby's own reading. It is far
// below what counting the primary's idle time added (the idle period here, idleFor).
const lagTolerance = 0.5

// idleFor is how long the primary writes nothing before the burst.
const idleFor = 8 * time.Second

// An ordinary login's standby lag after the primary was idle: with the standby's replay
// paused, a burst of writes follows idleFor without any; the lag "app" measures (without
// pg_monitor, from positions) must match the superuser's pg_stat_replication.replay_lag
// read at the same moments, not count the idle time (it did: now − the last replayed
// commit, idle time included).
func TestLagAfterIdleMatchesStatReplication(t *testing.T) {
	t.Parallel() // owns its cluster: it pauses the standby's replay
	h := clustertest.NewHandmade(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	prim, stby, watch := h.Admin(ctx, t, 0), h.Admin(ctx, t, 1), h.Admin(ctx, t, 0)
	defer prim.Close(context.Background())
	defer stby.Close(context.Background())
	defer watch.Close(context.Background())
	if _, err := prim.Exec(ctx, "CREATE TABLE w (id bigserial PRIMARY KEY, v text); INSERT INTO w (v) VALUES ('x')"); err != nil {
		t.Fatal(err)
	}
	// The idle period: the standby's last replayed commit grows old.
	waitUntil(t, ctx, stby, "SELECT coalesce(clock_timestamp() - pg_last_xact_replay_timestamp() > $1::interval, false)", fmt.Sprintf("%d seconds", int(idleFor.Seconds())))

	p, err := NewPG(ctx, []PGNode{{Name: "node0", ConnString: h.ConnString(0, clustertest.HandmadeApp)},
		{Name: "node1", ConnString: h.ConnString(1, clustertest.HandmadeApp)}}, PGOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	st := &result.Step{Window: result.Window{Start: time.Now()}}
	if err := p.Start(ctx, st); err != nil {
		t.Fatal(err)
	}
	if _, err := stby.Exec(ctx, "SELECT pg_wal_replay_pause()"); err != nil {
		t.Fatal(err)
	}
	defer stby.Exec(context.Background(), "SELECT pg_wal_replay_resume()")
	waitUntil(t, ctx, stby, "SELECT pg_get_wal_replay_pause_state() = 'paused'")

	// The superuser reads pg_stat_replication beside the sampler.
	theirs := clustertest.WatchReplayLag(ctx, t, watch)
	burst := time.Now()
	for time.Since(burst) < 4*time.Second {
		if _, err := prim.Exec(ctx, "INSERT INTO w (v) SELECT repeat('x', 200) FROM generate_series(1, 500)"); err != nil {
			t.Fatal(err)
		}
	}
	st.Window.End = time.Now()
	theirs.Stop()
	if err := p.Stop(ctx, st); err != nil {
		t.Fatal(err)
	}
	if theirs.Reads() < 10 {
		t.Fatalf("pg_stat_replication measured the lag %d times in the burst", theirs.Reads())
	}
	compared := 0
	ts := st.Series[result.PGStandbyName("node0", "node1", result.PGReplayLagSeconds)]
	within := st.Series[result.PGStandbyName("node0", "node1", result.PGReplayLagWithin)]
	if len(within.V) != len(ts.V) {
		t.Fatalf("lag series of %d points, its uncertainty's of %d", len(ts.V), len(within.V))
	}
	for i, v := range ts.V {
		at := ts.Start.Add(time.Duration(ts.T[i] * float64(time.Second)))
		want, ok := theirs.At(at)
		if !ok || at.Before(burst) {
			continue
		}
		compared++
		t.Logf("at %.2f s of the burst: app %.2f ±%.2f s, pg_stat_replication %.2f s", at.Sub(burst).Seconds(), v, within.V[i], want)
		if math.Abs(v-want) > lagTolerance+within.V[i] {
			t.Errorf("at %.2f s of the burst: lag %.2f s from positions, %.2f s in pg_stat_replication", at.Sub(burst).Seconds(), v, want)
		}
	}
	if compared < 2 {
		t.Errorf("%d points of the lag series compared: %+v", compared, ts)
	}
	lag, ok := st.Counters[result.PGStandbyName("node0", "node1", result.PGReplayLagSeconds)]
	want, wok := theirs.At(st.Window.End)
	lagWithin := st.Counters[result.PGStandbyName("node0", "node1", result.PGReplayLagWithin)]
	t.Logf("window: app %.2f ±%.2f s, pg_stat_replication %.2f s (burst %.1f s after %v idle)", lag, lagWithin, want, st.Window.End.Sub(burst).Seconds(), idleFor)
	if !ok || !wok || math.Abs(lag-want) > lagTolerance+lagWithin {
		t.Errorf("window's lag %.2f s (%v), pg_stat_replication's %.2f s (%v)", lag, ok, want, wok)
	}
	x, err := st.Sample()
	if err != nil || x == nil {
		t.Fatalf("sample section %v", err)
	}
	if l := x.Nodes["node0"].Lag; len(l) != 1 || l[0].Standby != "node1" || l[0].Method != result.LagFromPositions || l[0].Absent != "" {
		t.Errorf("lag section %+v", l)
	}
}

// waitUntil waits until query (one boolean) is true, or the test's context ends.
func waitUntil(t *testing.T, ctx context.Context, c *pgx.Conn, query string, args ...any) {
	t.Helper()
	for {
		var ok bool
		if err := c.QueryRow(ctx, query, args...).Scan(&ok); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", query)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
