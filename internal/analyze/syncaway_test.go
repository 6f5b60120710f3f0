package analyze

import (
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/result"
)

// The figures of TestSyncStandbyStoppedIsNoSaturation's run (cmd/agbench): a sync-commit
// cluster's one synchronous standby stopped 2 s into an 8 s stress of inserts by 2 threads.
// The primary's pg_stat_replication listed standby1 (sync) last at 1.05 s and no more from
// 2.05 s; the sampler lost its session to it at 2.05 s; SyncRep waits were 97% of the
// sampled sessions; no operation completed after 2.0 s.
func recordedSyncAway() *result.SampleStep {
	lost := 2.052
	return &result.SampleStep{Nodes: map[string]result.SampleNode{
		"primary": {Info: result.PGNodeInfo{Name: "primary"},
			Absences: []result.StandbyAbsence{{Standby: "standby1", Sync: true, LastSeen: 1.051, From: 2.049, To: 8.048, ToEnd: true}}},
		"standby1": {Info: result.PGNodeInfo{Name: "standby1", InRecovery: true}, LostAt: &lost},
	}}
}

func syncAwaySaturation(away []StandbyAway) Saturation {
	steps := []Step{{Load: 2, Throughput: 589, MeanMs: 0.9, P50Ms: 0.6, P99Ms: 2.9, WindowSec: 8.05}}
	ev := []Evidence{{Load: 2, Waits: Waits{CPU: 0.04, SyncRep: 1.94, Client: 0.02}, CPUBusy: 0.4,
		TopWaits: []result.WaitEvent{{Type: "IPC", Event: "SyncRep", Class: "sync_rep", Sessions: 1.94}}, Away: away}}
	return WhatSaturated(FindKnee(steps, nil), ev, "threads")
}

// Commits that waited for a synchronous standby that was down are no saturation: the
// sentence says so with what the samplers measured of its absence.
func TestSyncStandbyDownIsNoSaturation(t *testing.T) {
	away := awayOf(recordedSyncAway(), 2)
	if len(away) != 1 || away[0].Standby != "standby1" || !away[0].Sync || !away[0].Left || away[0].LostAt == nil {
		t.Fatalf("away %+v: want standby1, synchronous, gone from pg_stat_replication and lost", away)
	}
	s := syncAwaySaturation(away)
	want := "At 2 threads, commits waited for the synchronous standby standby1, which was down from 2.0 s of the window to its end " +
		"(gone from its primary's pg_stat_replication, last seen at 1.1 s; the sampler lost its session to it at 2.1 s): " +
		"SyncRep waits (mostly IPC:SyncRep) were 97% of sampled sessions; it was not there, not saturated."
	if s.Resource != ResSyncAway || s.Sentence != want {
		t.Fatalf("saturation %q:\n%s\nwant\n%s", s.Resource, s.Sentence, want)
	}

	// A sampler whose login may not read pg_stat_replication's rows saw only that it lost
	// the standby: it cannot say the standby was the synchronous one.
	x := recordedSyncAway()
	p := x.Nodes["primary"]
	p.Absences = nil
	x.Nodes["primary"] = p
	s = syncAwaySaturation(awayOf(x, 2))
	if s.Resource != ResSyncAway || !strings.Contains(s.Sentence, "commits waited for a synchronous standby while standby1 was down (the sampler lost its session to it at 2.1 s of the window)") {
		t.Fatalf("lost only: %q %s", s.Resource, s.Sentence)
	}

	// The sampler lost it between the primary's readings: down from then.
	early := 1.5
	away[0].LostAt = &early
	if s = syncAwaySaturation(away); !strings.Contains(s.Sentence, "which was down from 1.5 s of the window to its end") {
		t.Fatalf("lost before the reading without it: %s", s.Sentence)
	}

	// A synchronous standby frozen (SIGSTOP) from 2 s to 7 s: still listed, no reply.
	x = recordedSyncAway()
	x.Nodes["primary"] = result.SampleNode{Info: result.PGNodeInfo{Name: "primary"},
		Absences: []result.StandbyAbsence{{Standby: "standby1", Sync: true, Silent: true, LastSeen: 2.01, From: 2.01, To: 7.04}}}
	x.Nodes["standby1"] = result.SampleNode{Info: result.PGNodeInfo{Name: "standby1", InRecovery: true}}
	s = syncAwaySaturation(awayOf(x, 2))
	if want := "At 2 threads, commits waited for the synchronous standby standby1, which stopped answering from 2.0 s of the window to 7.0 s " +
		"(still listed in its primary's pg_stat_replication, it sent no reply while WAL waited for its flush): SyncRep waits"; s.Resource != ResSyncAway ||
		!strings.HasPrefix(s.Sentence, want) || !strings.HasSuffix(s.Sentence, "; it was not answering, not saturated.") {
		t.Fatalf("frozen: %q %s", s.Resource, s.Sentence)
	}

	// A potential standby that left while the synchronous one stayed: it saturated.
	x = recordedSyncAway()
	p = x.Nodes["primary"]
	p.Absences[0].Sync = false
	x.Nodes["primary"] = p
	if s = syncAwaySaturation(awayOf(x, 2)); s.Resource != ResSyncRep {
		t.Fatalf("an asynchronous standby left: %q %s", s.Resource, s.Sentence)
	}

	// The same waits with every standby there: the synchronous standby saturated.
	if s = syncAwaySaturation(nil); s.Resource != ResSyncRep || !strings.Contains(s.Sentence, "the synchronous standby saturated") {
		t.Fatalf("standby there: %q %s", s.Resource, s.Sentence)
	}
}
