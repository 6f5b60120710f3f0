package sample

import (
	"math"
	"strings"
	"testing"
	"time"
)

// A standby's lag from the primary's positions over time: 0 at (or past) the primary's last
// position read before it; else the time since the primary was last at its position,
// interpolated between the readings around it, with the primary's idle time before a burst
// never counted; unknown before the primary's first reading or behind its first position.
func TestLagAt(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	// Idle at 1000 for 60 s, then 100 bytes a second from 60 s.
	var p []posRead
	for s := 0.0; s <= 60; s += 0.1 {
		p = append(p, posRead{at: at(s), lsn: 1000})
	}
	for s := 60.1; s <= 70.001; s += 0.1 {
		p = append(p, posRead{at: at(s), lsn: 1000 + int64(math.Round((s-60)*100))})
	}
	for _, c := range []struct {
		name     string
		at       float64
		replayed int64
		lag      float64
		ok       bool
	}{
		{"caught up while idle", 30, 1000, 0, true},
		{"at the primary's last position", 65.05, 1500, 0, true},
		{"past the primary's last position read", 65.05, 1510, 0, true},
		{"behind since the burst began, idle not counted", 65, 1000, 5, true},
		{"mid-burst", 65, 1250, 2.5, true},
		{"between two readings of the primary", 65, 1255, 2.45, true},
		{"before the primary's first reading", -1, 1000, 0, false},
		{"behind the primary's first position", 65, 999, 0, false},
	} {
		lag, within, ok := lagAt(p, at(c.at), c.replayed)
		if ok != c.ok || math.Abs(lag-c.lag) > within+0.001 || within > 0.101 {
			t.Errorf("%s: lag %.3f s ±%.3f %v, want %.3f s %v", c.name, lag, within, ok, c.lag, c.ok)
		}
	}
	// The primary read late (a busy machine): 1.6 s between its last idle reading and the
	// first of the burst. The burst began somewhere between; the figure is the middle, and
	// says it is within 0.8 s of the truth either way.
	late := []posRead{{at: at(0), lsn: 1000}, {at: at(10), lsn: 1000}, {at: at(11.6), lsn: 1100}, {at: at(12), lsn: 1140}}
	if lag, within, ok := lagAt(late, at(14), 1000); !ok || math.Abs(lag-3.2) > 0.001 || math.Abs(within-0.8) > 0.001 {
		t.Errorf("read late at the burst's start: lag %.3f ±%.3f s %v, want 3.2 ±0.8", lag, within, ok)
	}
	if lag, within, ok := lagAt(late, at(14), 1050); !ok || math.Abs(lag-3.2) > 0.001 || math.Abs(within-1.6) > 0.001 {
		t.Errorf("read late mid-burst: lag %.3f ±%.3f s %v, want 3.2 ±1.6 (interpolated by bytes)", lag, within, ok)
	}
	// The bounds of a standby behind every position read: more than since the first
	// reading, at most since its last replayed commit.
	since := 75.0
	b := lagBounds("east", p, pgCounters{at: at(70), sinceReplay: &since})
	if !strings.Contains(b, "more than 70.0 s") || !strings.Contains(b, "at most 75.0 s") {
		t.Errorf("bounds %q", b)
	}
}
