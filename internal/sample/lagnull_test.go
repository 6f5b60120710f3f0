package sample

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
)

// A standby caught up with no WAL since: pg_stat_replication shows its lag times NULL, and
// the database sampler records its bytes behind (0) but no lag in seconds, neither as a
// counter nor as a series: absent, not 0 s (it read NULL as 0 before).
func TestForgottenLagIsAbsent(t *testing.T) {
	h := clustertest.NewHandmade(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var st *result.Step
	h.WhileLagForgotten(ctx, t, func() {
		p, err := NewPG(ctx, []PGNode{{Name: "node0", ConnString: h.ConnString(0, clustertest.HandmadeAdmin)}}, PGOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close(context.Background())
		st = &result.Step{Window: result.Window{Start: time.Now()}}
		if err := p.Start(ctx, st); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1500 * time.Millisecond) // a few readings; the window's length does not matter
		st.Window.End = time.Now()
		if err := p.Stop(ctx, st); err != nil {
			t.Fatal(err)
		}
	})
	behind := 0
	for k, v := range st.Counters {
		if _, _, fig, ok := result.ParsePGStandby(k); ok {
			switch {
			case fig == "behind_mb":
				behind++
				if v != 0 {
					t.Errorf("%s = %v, want 0 (caught up)", k, v)
				}
			case strings.HasSuffix(fig, "_lag_s") || fig == result.PGReplayLagGrowth:
				t.Errorf("counter %s = %v from lag times that were NULL", k, v)
			}
		}
	}
	if behind != 1 {
		t.Errorf("%d standbys' bytes behind recorded, want 1: %v", behind, st.Counters)
	}
	for k := range st.Series {
		if strings.HasSuffix(k, "_lag_s") && strings.Contains(k, ".standby.") {
			t.Errorf("series %s from lag times that were NULL", k)
		}
	}
}
