package sample

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
)

// A standby caught up with no WAL since: pg_stat_replication shows its lag times NULL, and
// the database sampler records its bytes behind (0) but no lag in seconds, neither as a
// counter nor as a series: absent, not 0 s (it read NULL as 0 before), and its sample
// section says why.
func TestForgottenLagIsAbsent(t *testing.T) {
	t.Parallel() // owns its cluster: it changes the standby's settings and needs it idle
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
	if x, err := st.Sample(); err != nil || len(x.Nodes["node0"].Lag) != 1 || !strings.Contains(x.Nodes["node0"].Lag[0].Absent, "NULL at every read") {
		t.Errorf("the step does not say why the lag is absent: %+v %v", x, err)
	}
}

// pg_stat_replication forgets a standby's lag (NULL) once the standby has replayed all WAL
// in two replies running, so the read Stop takes after the load has ended may show NULL
// for a standby that earlier reads of the window measured. Fed readings by hand and read
// back through a result file, the analysis names such a standby with its last measured lag
// and growth; a standby no read measured is absent from the evidence, with its reason.
func TestLagForgottenBeforeTheLastRead(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name    string
		lags    []*float64 // s1's replay lag at each read, one a second; nil: NULL
		standby string
		lag     float64
		growth  float64
		absent  bool
	}{
		{name: "measured, forgotten at the end", lags: []*float64{ptr(0.2), ptr(0.4), ptr(0.6), nil}, standby: "s1", lag: 0.6, growth: 0.2},
		{name: "measured once, mid-window", lags: []*float64{nil, ptr(0.3), nil}, standby: "s1", lag: 0.3},
		{name: "measured at every read", lags: []*float64{ptr(0.2), ptr(0.1), ptr(0.5)}, standby: "s1", lag: 0.5, growth: 0.15},
		{name: "never measured", lags: []*float64{nil, nil, nil}, absent: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			reads := make([]pgCounters, len(c.lags))
			for i, lag := range c.lags {
				reads[i] = pgCounters{at: t0.Add(time.Duration(i) * time.Second), lsn: int64(i) * 1e6, io: &ioCounters{},
					standbys: map[string]standbyState{"s1": {replayLag: lag, replayLSN: int64(i) * 1e6}}}
			}
			e, st := evidenceOfReads(t, reads)
			if _, ok := st.Counters[result.PGStandbyName("db", "s1", result.PGReplayLagSeconds)]; ok == c.absent {
				t.Errorf("replay lag counter present %v, want %v: %v", ok, !c.absent, st.Counters)
			}
			if e.Standby != c.standby || math.Abs(e.ReplayLagSec-c.lag) > 1e-9 || math.Abs(e.LagGrowth-c.growth) > 1e-9 {
				t.Errorf("evidence: standby %q lag %v growth %v, want %q %v %v", e.Standby, e.ReplayLagSec, e.LagGrowth, c.standby, c.lag, c.growth)
			}
			if absent := e.LagAbsent != ""; absent != c.absent || absent && (!strings.Contains(e.LagAbsent, "s1") || !strings.Contains(e.LagAbsent, "NULL")) {
				t.Errorf("lag absent %q, want absent %v, naming s1", e.LagAbsent, c.absent)
			}
		})
	}
}

// evidenceOfReads stops a database sampler that took these readings of node "db" (the
// first at Start) and returns the analysis's evidence of the step, read from a result file.
func evidenceOfReads(t *testing.T, reads []pgCounters) (analyze.Evidence, *result.Step) {
	t.Helper()
	t0, end := reads[0].at, reads[len(reads)-1].at
	st := &result.Step{VUs: 8, Window: result.Window{Start: t0, End: end}, Ops: map[string]*result.Op{"q": {Count: 100}}, Complete: true}
	n := &pgNode{info: NodeInfo{Name: "db", VersionNum: 150000, ReadAllStats: true}}
	n.reset(t0)
	n.begin(reads[0])
	for _, c := range reads[1:] {
		n.record(c)
	}
	p := &PG{nodes: []*pgNode{n}, stop: make(chan struct{})}
	if err := p.Stop(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	r := &result.Result{Schema: result.SchemaVersion, Meta: result.Meta{Command: "stress"}, Steps: []result.Step{*st}, Complete: true}
	dir := t.TempDir()
	if _, err := result.Write(dir, r); err != nil {
		t.Fatal(err)
	}
	back, err := result.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	run, err := analyze.FromResult(back, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return run.Variants[0].Input.Evidence[0], &back.Steps[0]
}
