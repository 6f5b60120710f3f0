package sample

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
)

// A read-only run on a standby caught up, with no WAL since: pg_stat_replication shows its
// lag times NULL (they are forgotten once the standby has replayed all WAL), and the
// replay timestamp is old. Caught up is a lag measured, of 0 s: the superuser's sampler
// (pg_stat_replication, 0 bytes behind) and the ordinary login's (positions, watching both
// nodes) each record replay_lag_s 0 with its source, and the analysis judges the standby
// (it said "whether a standby fell behind was not judged" for the superuser's).
func TestCaughtUpLagIsZero(t *testing.T) {
	t.Parallel() // owns its cluster: it changes the standby's settings and needs it idle
	h := clustertest.NewHandmade(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	samplers := []struct {
		login  string
		nodes  []int
		method string
	}{
		{clustertest.HandmadeAdmin, []int{0}, result.LagFromStatReplication},
		{clustertest.HandmadeApp, []int{0, 1}, result.LagFromPositions},
	}
	steps := make([]*result.Step, len(samplers))
	h.WhileLagForgotten(ctx, t, func() {
		var ps []*PG
		for _, s := range samplers {
			var nodes []PGNode
			for _, i := range s.nodes {
				nodes = append(nodes, PGNode{Name: fmt.Sprintf("node%d", i), ConnString: h.ConnString(i, s.login)})
			}
			p, err := NewPG(ctx, nodes, PGOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(context.Background())
			ps = append(ps, p)
		}
		for i, p := range ps {
			steps[i] = &result.Step{VUs: 1, Window: result.Window{Start: time.Now()}, Ops: map[string]*result.Op{"q": {Count: 100}}, Complete: true}
			if err := p.Start(ctx, steps[i]); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range ps { // a few readings; the window's length does not matter
			readings(t, ctx, p, 2, 3)
		}
		for i, p := range ps {
			steps[i].Window.End = time.Now()
			if err := p.Stop(ctx, steps[i]); err != nil {
				t.Fatal(err)
			}
		}
	})
	for i, s := range samplers {
		st := steps[i]
		for k := range st.Series {
			if strings.HasSuffix(k, "_lag_s") && strings.Contains(k, ".standby.") && !strings.HasSuffix(k, result.PGReplayLagSeconds) {
				t.Errorf("%s: series %s from lag times that were NULL", s.login, k)
			}
		}
		x, err := st.Sample()
		if err != nil || x == nil || len(x.Nodes["node0"].Lag) != 1 {
			t.Fatalf("%s: sample section %+v %v", s.login, x, err)
		}
		l := x.Nodes["node0"].Lag[0]
		var lag, behind *float64
		for k, v := range st.Counters {
			if _, _, fig, ok := result.ParsePGStandby(k); ok && fig == result.PGReplayLagSeconds {
				lag = &v
			} else if ok && fig == "behind_mb" {
				behind = &v
			}
		}
		t.Logf("%s: lag %+v, %v s, %v MB behind", s.login, l, deref(lag), deref(behind))
		if l.Method != s.method || l.Absent != "" || lag == nil || *lag != 0 || behind == nil || *behind != 0 {
			t.Errorf("%s: lag %+v, %v s, %v MB behind; want 0 s measured by %s", s.login, l, deref(lag), deref(behind), s.method)
		}
		e := evidenceOfStep(t, st)
		if e.LagAbsent != "" || e.Standby == "" || e.ReplayLagSec != 0 {
			t.Errorf("%s: evidence standby %q lag %v absent %q", s.login, e.Standby, e.ReplayLagSec, e.LagAbsent)
		}
	}
}

func deref(v *float64) any {
	if v == nil {
		return "absent"
	}
	return *v
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
		// caughtUp: at which reads the standby was at the primary's position ("end": the
		// last, "all")
		caughtUp string
	}{
		{name: "measured, forgotten at the end", lags: []*float64{ptr(0.2), ptr(0.4), ptr(0.6), nil}, standby: "s1", lag: 0.6, growth: 0.2},
		{name: "measured once, mid-window", lags: []*float64{nil, ptr(0.3), nil}, standby: "s1", lag: 0.3},
		{name: "measured at every read", lags: []*float64{ptr(0.2), ptr(0.1), ptr(0.5)}, standby: "s1", lag: 0.5, growth: 0.15},
		{name: "never measured", lags: []*float64{nil, nil, nil}, absent: true},
		{name: "caught up at the end", lags: []*float64{ptr(0.2), ptr(0.4), nil}, caughtUp: "end", standby: "s1", lag: 0, growth: -0.1},
		{name: "caught up throughout", lags: []*float64{nil, nil}, caughtUp: "all", standby: "s1", lag: 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			reads := make([]pgCounters, len(c.lags))
			for i, lag := range c.lags {
				behind := int64(1e5) // behind: a NULL lag is not measured
				if c.caughtUp == "all" || c.caughtUp == "end" && i == len(c.lags)-1 {
					behind = 0
				}
				reads[i] = pgCounters{at: t0.Add(time.Duration(i) * time.Second), lsn: int64(i)*1e6 + behind, io: &ioCounters{},
					standbys: map[string]standbyState{"s1": {replayLag: lag, replayLSN: int64(i) * 1e6, behind: behind}}}
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
	return evidenceOfStep(t, st), st
}

// evidenceOfStep is the analysis's evidence of a step, read back from a result file.
func evidenceOfStep(t *testing.T, st *result.Step) analyze.Evidence {
	t.Helper()
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
	*st = back.Steps[0]
	return run.Variants[0].Input.Evidence[0]
}

// A standby pg_stat_replication shows with replay_lag NULL while it is behind at every read
// (before the walsender's first lag sample) has its lag from positions where the sampler
// watches it, and says so; one it does not watch is absent, with why.
func TestNullLagOfAWatchedStandbyFromPositions(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	for _, watched := range []bool{true, false} {
		db := &pgNode{info: NodeInfo{Name: "db", VersionNum: 150000, ReadAllStats: true}}
		db.reset(t0)
		s1 := &pgNode{info: NodeInfo{Name: "s1", VersionNum: 150000, InRecovery: true}}
		s1.reset(t0)
		// The primary was at 1000 (read in an earlier window) until 0 s, then wrote 1000 bytes
		// a second; the standby stopped at 1000, behind at every read of the window.
		db.notePosition(posRead{at: t0, lsn: 1000}, true)
		for i := 0; i <= 4; i++ {
			sec := float64(i) + 0.5
			c := pgCounters{at: at(sec), lsn: 1000 + int64(sec*1000), io: &ioCounters{},
				standbys: map[string]standbyState{"s1": {replayLSN: 1000, behind: int64(sec * 1000)}}}
			sc := pgCounters{at: at(sec + 0.05), lsn: 1000, inRecovery: true, io: &ioCounters{}}
			if i == 0 {
				db.begin(c)
				s1.begin(sc)
			} else {
				db.record(c)
				s1.record(sc)
			}
		}
		nodes := []*pgNode{db}
		if watched {
			nodes = append(nodes, s1)
		}
		st := &result.Step{Window: result.Window{Start: t0, End: at(4.55)}}
		p := &PG{nodes: nodes, stop: make(chan struct{})}
		if err := p.Stop(context.Background(), st); err != nil {
			t.Fatal(err)
		}
		x, err := st.Sample()
		if err != nil || len(x.Nodes["db"].Lag) != 1 {
			t.Fatalf("watched %v: sample %+v %v", watched, x, err)
		}
		l := x.Nodes["db"].Lag[0]
		lag, ok := st.Counters[result.PGStandbyName("db", "s1", result.PGReplayLagSeconds)]
		// The primary's last reading at 1000 was at 0 s and its next at 0.5 s: the figure is
		// the middle, 4.3 s, and says it is within 0.25 s of the truth (4.55 s here).
		within := st.Counters[result.PGStandbyName("db", "s1", result.PGReplayLagWithin)]
		switch {
		case watched && (l.Method != result.LagFromPositions || l.Absent != "" || !ok || math.Abs(lag-4.3) > 0.01 ||
			math.Abs(within-0.25) > 0.001 || math.Abs(lag-4.55) > within+0.001):
			t.Errorf("watched: lag %+v, %v ±%v s (%v), want 4.3 ±0.25 s from positions", l, lag, within, ok)
		case !watched && (l.Absent == "" || ok || !strings.Contains(l.Absent, "does not watch the standby")):
			t.Errorf("not watched: lag %+v, %v s (%v), want absent, saying why", l, lag, ok)
		}
	}
}
