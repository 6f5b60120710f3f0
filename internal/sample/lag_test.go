package sample

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
)

// With replay paused on the standby of a hand-made cluster in each window, the ordinary login
// "app" (no pg_monitor) must get the standby's lag measured from replay positions, or
// absent with the privilege named, never 0; the superuser measures it from
// pg_stat_replication, and above 0.
func TestLagOfAnUnprivilegedLogin(t *testing.T) {
	t.Parallel() // owns its cluster: it pauses the standby's replay
	h := clustertest.NewHandmade(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	prim, stby, watch := h.Admin(ctx, t, 0), h.Admin(ctx, t, 1), h.Admin(ctx, t, 0)
	defer prim.Close(context.Background())
	defer stby.Close(context.Background())
	defer watch.Close(context.Background())
	if _, err := prim.Exec(ctx, "CREATE TABLE w (id bigserial PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	// One transaction replayed, so that the standby has a last replay time.
	waitFor(t, ctx, stby, "SELECT count(*) FROM pg_class WHERE relname = 'w' AND pg_last_xact_replay_timestamp() IS NOT NULL")

	measure := func(user string, nodes ...int) *result.Step {
		t.Helper()
		var pn []PGNode
		for _, i := range nodes {
			pn = append(pn, PGNode{Name: []string{"node0", "node1"}[i], ConnString: h.ConnString(i, user)})
		}
		p, err := NewPG(ctx, pn, PGOptions{Interval: 200 * time.Millisecond, WaitInterval: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close(context.Background())
		st := &result.Step{Window: result.Window{Start: time.Now()}}
		if err := p.Start(ctx, st); err != nil {
			t.Fatal(err)
		}
		// Replay paused once the sampler has read the primary's position: a standby already
		// behind the first position read has no lag measured from positions.
		if _, err := stby.Exec(ctx, "SELECT pg_wal_replay_pause()"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, ctx, stby, "SELECT count(*) FROM (SELECT pg_get_wal_replay_pause_state() s) p WHERE s = 'paused'")
		defer func() {
			if _, err := stby.Exec(ctx, "SELECT pg_wal_replay_resume()"); err != nil {
				t.Fatal(err)
			}
			var lsn string
			if err := prim.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&lsn); err != nil {
				t.Fatal(err)
			}
			waitUntil(t, ctx, stby, "SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn", lsn)
		}()
		// Writes through the window, so that the standby keeps reporting its positions.
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := prim.Exec(ctx, "INSERT INTO w (v) SELECT repeat('x', 500) FROM generate_series(1, 2000)"); err != nil {
					t.Error(err)
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
		// Readings of the window after the standby has told the primary how far behind it is.
		waitFor(t, ctx, watch, "SELECT count(*) FROM pg_stat_replication WHERE replay_lag IS NOT NULL AND replay_lsn < pg_current_wal_lsn()")
		readings(t, ctx, p, 3, 6)
		close(stop)
		wg.Wait()
		st.Window.End = time.Now()
		if err := p.Stop(ctx, st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	lagOf := func(st *result.Step) (lag, behind float64, n int) {
		for k, v := range st.Counters {
			if _, _, fig, ok := result.ParsePGStandby(k); ok {
				n++
				switch fig {
				case result.PGReplayLagSeconds:
					lag = max(lag, v)
				case "behind_mb":
					behind = max(behind, v)
				}
			}
		}
		return lag, behind, n
	}
	methods := func(st *result.Step) []result.StandbyLag {
		s, err := st.Sample()
		if err != nil || s == nil {
			t.Fatalf("sample section: %v", err)
		}
		return s.Nodes["node0"].Lag
	}

	// app, watching the primary only: the lag cannot be measured, and the step says why.
	st := measure(clustertest.HandmadeApp, 0)
	if _, _, n := lagOf(st); n != 0 {
		t.Errorf("app, primary only: standby figures recorded: %v", st.Counters)
	}
	if w := strings.Join(st.Warnings, "\n"); !strings.Contains(w, "replication lag not measured") || !strings.Contains(w, "pg_read_all_stats") || !strings.Contains(w, "login app") {
		t.Errorf("app, primary only: warnings %q", st.Warnings)
	}
	if m := methods(st); len(m) != 1 || m[0].Absent == "" || m[0].Method != "" {
		t.Errorf("app, primary only: lag %+v", m)
	}

	// app, watching both: measured from the standby's replay position.
	st = measure(clustertest.HandmadeApp, 0, 1)
	lag, behind, _ := lagOf(st)
	t.Logf("app: replay lag %.2f s, behind %.2f MB, %+v", lag, behind, methods(st))
	if lag <= 0 || behind <= 0 {
		t.Errorf("app: lag %.3f s, %.3f MB behind with replay paused: %v", lag, behind, st.Counters)
	}
	if m := methods(st); len(m) != 1 || m[0].Method != result.LagFromPositions || m[0].Standby != "node1" {
		t.Errorf("app: lag %+v", m)
	}

	// admin: measured by pg_stat_replication.
	st = measure(clustertest.HandmadeAdmin, 0)
	lag, behind, _ = lagOf(st)
	t.Logf("admin: replay lag %.2f s, behind %.2f MB, %+v", lag, behind, methods(st))
	if lag <= 0 || behind <= 0 {
		t.Errorf("admin: lag %.3f s, %.3f MB behind with replay paused: %v", lag, behind, st.Counters)
	}
	if m := methods(st); len(m) != 1 || m[0].Method != result.LagFromStatReplication {
		t.Errorf("admin: lag %+v", m)
	}
	if len(st.Warnings) > 0 {
		t.Errorf("admin: warnings %q", st.Warnings)
	}
}
