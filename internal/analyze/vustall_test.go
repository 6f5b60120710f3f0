package analyze

import (
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// A step of vus VUs whose throughput per second is v, with the runner's VU stretches q.
func vuStep(vus int, q []result.VUQuiet, v ...float64) result.Step {
	t0 := time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC)
	ts := result.TimeSeries{Start: t0}
	var n int64
	for i, x := range v {
		ts.T, ts.V = append(ts.T, float64(i+1)), append(ts.V, x)
		n += int64(x)
	}
	return result.Step{VUs: vus, Window: result.Window{Start: t0, End: t0.Add(time.Duration(len(v)) * time.Second)},
		Ops: map[string]*result.Op{"q": {Count: n}}, Throughput: map[string]result.TimeSeries{"*": ts},
		VUQuietMinSeconds: 1, VUQuiet: q}
}

// One VU of four waits 5.1 s for a lock while the other three go on (the per-second
// throughput drops by a quarter): a VU stall, named with its node and its stretch.
func TestVUStalled(t *testing.T) {
	stuck := []result.VUQuiet{{VU: 2, From: 4.03, To: 9.11, Node: "standby1"}}
	st := vuStep(4, stuck, 4012, 3987, 4050, 4001, 3010, 2995, 3021, 2987, 3003, 3990, 4021, 4005)
	got, watched := VUStalls(st)
	if !watched || len(got) != 1 {
		t.Fatalf("stalls %+v (watched %v), want one", got, watched)
	}
	// 0.97 s of 3010/s, then 2995+3021+2987+3003 over four whole seconds, then 0.11 s of 3990/s: 15,365.
	if g := got[0]; g.VU != 2 || g.VUs != 4 || g.Node != "standby1" || g.OthersOps < 15364 || g.OthersOps > 15366 {
		t.Fatalf("stall %+v", g)
	}
	v := vuStalled([]Step{{Load: 4, VUStalls: got, VUsWatched: true}}, "threads")
	for _, want := range []string{"at 4 threads VU 3 of 4 (on standby1) completed no operation for 5.1 s (from 4.0 s to 9.1 s of the window)", "while the other 3 VUs completed about 15,365 (5,122 each)"} {
		if v == nil || !strings.Contains(v.Message, want) {
			t.Fatalf("verdict %+v, want %q", v, want)
		}
	}
	// Two VUs on a frozen standby: both named, the longest first.
	two := []result.VUQuiet{{VU: 0, From: 3.02, To: 8.0, Node: "standby1"}, {VU: 2, From: 2.99, To: 8.0, Node: "standby1"}}
	got, _ = VUStalls(vuStep(4, two, 4012, 3987, 4050, 2001, 2010, 1995, 2021, 1987, 4003, 3990))
	v = vuStalled([]Step{{Load: 4, VUStalls: got}}, "threads")
	if v == nil || !strings.Contains(v.Message, "at 4 threads VU 3 of 4 (on standby1) completed no operation for 5.0 s (from 3.0 s to 8.0 s of the window) while the other 3 VUs") ||
		!strings.Contains(v.Message, "; also VU 1 of 4 (on standby1) completed no operation for 5.0 s (from 3.0 s to 8.0 s of the window):") {
		t.Fatalf("verdict %+v", v)
	}
	// To the window's end, after its session was made again.
	end := []result.VUQuiet{{VU: 0, From: 8.5, To: 12, ToEnd: true, Node: "primary", Reconnected: true}}
	got, _ = VUStalls(vuStep(4, end, 4012, 3987, 4050, 4001, 3010, 2995, 3021, 2987, 3003, 3990, 4021, 4005))
	v = vuStalled([]Step{{Load: 4, VUStalls: got}}, "threads")
	if v == nil || !strings.Contains(v.Message, "VU 1 of 4 (its session lost and made again, on primary) completed no operation for 3.5 s (from 8.5 s of the window to its end)") {
		t.Fatalf("verdict %+v", v)
	}
}

// No VU stall: a stretch while every VU stalled (that is `stalled`), a VU of a slow
// fixed-rate step waiting for its turn, a stretch under 2 s, a step of one VU, and a result
// of an older agbench (not watched, nothing said).
// A terminals run's workers are its pool's sessions: one of three that completed nothing
// while the others went on is a session stall, not a "VU 2 of 3" of a run that has 30
// terminals and no VUs.
func TestSessionStalledInATerminalsRun(t *testing.T) {
	st := vuStep(0, []result.VUQuiet{{VU: 1, From: 4.03, To: 9.11, Node: "primary"}}, 300, 301, 299, 302, 200, 201, 199, 202, 200, 300, 301, 299)
	if err := st.SetExtra(result.ExtraTerminals, result.TerminalsStep{Terminals: 30, Sessions: 3}); err != nil {
		t.Fatal(err)
	}
	got, _ := VUStalls(st)
	if len(got) != 1 || !got[0].Session || got[0].VUs != 3 {
		t.Fatalf("stalls %+v, want one of a pool session", got)
	}
	v := vuStalled([]Step{{Load: 30, VUStalls: got, VUsWatched: true}}, "terminals")
	for _, want := range []string{"at 30 terminals session 2 of 3 (on primary) completed no operation for 5.1 s", "while the other 2 sessions completed about"} {
		if v == nil || !strings.Contains(v.Message, want) {
			t.Fatalf("verdict %+v, want %q", v, want)
		}
	}
}

func TestNoVUStall(t *testing.T) {
	one := []result.VUQuiet{{VU: 1, From: 3, To: 7}}
	for name, st := range map[string]result.Step{
		"all stalled": vuStep(4, one, 4000, 4000, 4000, 0, 0, 0, 0, 4000),
		"fixed rate":  vuStep(8, one, 10, 10, 10, 10, 10, 10, 10, 10), // 40 ops in 4 s: under 6 each for the other 7
		"1.9 s":       vuStep(4, []result.VUQuiet{{VU: 1, From: 3, To: 4.9}}, 4000, 4000, 4000, 3000, 3000, 4000),
		"one VU":      vuStep(1, one, 4000, 4000, 4000, 4000, 4000, 4000, 4000, 4000),
	} {
		if got, watched := VUStalls(st); len(got) > 0 || !watched {
			t.Errorf("%s: stalls %+v (watched %v), want none, watched", name, got, watched)
		}
	}
	old := vuStep(4, nil, 4000, 4000, 4000)
	old.VUQuietMinSeconds = 0
	if got, watched := VUStalls(old); len(got) > 0 || watched {
		t.Errorf("older result: stalls %+v, watched %v", got, watched)
	}
	if v := vuStalled([]Step{{Load: 4}}, "threads"); v != nil {
		t.Errorf("no stall: verdict %+v", v)
	}
}
