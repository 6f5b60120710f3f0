package analyze

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agbench/agbench/internal/result"
)

// Commits of a synchronous-commit cluster wait (IPC:SyncRep) for a synchronous standby to
// confirm them. When that standby is stopped, crashed or cut off, they wait because it is not
// there, not because it is busy: "what saturated" must not call it saturated. The samplers
// say it was not there when it left its primary's pg_stat_replication during the window, or
// stayed listed but sent no reply for seconds while WAL waited for it (result.StandbyAbsence),
// or when they lost their own session to it (result.SampleNode.LostAt).

// StandbyAway is a standby that was not there for part of a step's window.
type StandbyAway struct {
	// Load is the step's load.
	Load    float64 `json:"load"`
	Standby string  `json:"standby"`
	// Sync is set when pg_stat_replication called it synchronous in the window.
	Sync bool `json:"sync,omitempty"`
	// Left is set when it left its primary's pg_stat_replication: last seen at LastSeen,
	// missing from From (seconds of the window) to To, or to the window's end (ToEnd).
	Left bool `json:"left,omitempty"`
	// Silent is set when it stayed listed but sent no reply from From (its last reply) to To
	// while WAL waited for its flush (frozen, or cut off with the connection still open).
	Silent   bool    `json:"silent,omitempty"`
	LastSeen float64 `json:"last_seen,omitempty"`
	From     float64 `json:"from,omitempty"`
	To       float64 `json:"to,omitempty"`
	ToEnd    bool    `json:"to_end,omitempty"`
	// LostAt is when the sampler lost its session to the standby, in seconds of the window.
	LostAt *float64 `json:"lost_at,omitempty"`
}

// awayOf reads a step's sampler section: the standbys that left a primary's
// pg_stat_replication, and the standbys the sampler lost.
func awayOf(x *result.SampleStep, load float64) []StandbyAway {
	var out []StandbyAway
	for _, name := range slices.Sorted(maps.Keys(x.Nodes)) {
		for _, a := range x.Nodes[name].Absences {
			out = append(out, StandbyAway{Load: load, Standby: a.Standby, Sync: a.Sync, Left: !a.Silent, Silent: a.Silent,
				LastSeen: a.LastSeen, From: a.From, To: a.To, ToEnd: a.ToEnd})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(x.Nodes)) {
		n := x.Nodes[name]
		if n.LostAt == nil || !n.Info.InRecovery {
			continue
		}
		if i := slices.IndexFunc(out, func(a StandbyAway) bool { return a.Standby == name }); i >= 0 {
			out[i].LostAt = n.LostAt
			continue
		}
		out = append(out, StandbyAway{Load: load, Standby: name, LostAt: n.LostAt})
	}
	return out
}

// syncAwayOf picks, of the standbys away in a window, the one commits waited for: one
// pg_stat_replication called synchronous; else, when it listed none that left (a sampler
// whose login may not read its rows), one the sampler lost. A standby that left while
// listed as asynchronous or potential is not it: the synchronous one was there.
func syncAwayOf(away []StandbyAway) (StandbyAway, bool) {
	if i := slices.IndexFunc(away, func(a StandbyAway) bool { return a.Sync }); i >= 0 {
		return away[i], true
	}
	if slices.ContainsFunc(away, func(a StandbyAway) bool { return a.Left || a.Silent }) {
		return StandbyAway{}, false
	}
	for _, a := range away {
		if a.LostAt != nil {
			return a, true
		}
	}
	return StandbyAway{}, false
}

// syncAway says that commits waited for a synchronous standby that was not there (a, of
// away), with what was measured of its absence, and waits, the SyncRep figures: no
// saturation.
func syncAway(a StandbyAway, away []StandbyAway, waits, loadName string) Saturation {
	if !a.Left && !a.Silent { // lost to the sampler only: nothing says whether it was the synchronous one
		return Saturation{Resource: ResSyncAway, Sentence: fmt.Sprintf("commits waited for a synchronous standby while %s was down (the sampler lost its session to it at %.1f s of the window): %s; it was not there, not saturated",
			a.Standby, *a.LostAt, waits)}
	}
	facts := []string{fmt.Sprintf("gone from its primary's pg_stat_replication, last seen at %.1f s", a.LastSeen)}
	down := "was down"
	if a.Silent {
		facts = []string{"still listed in its primary's pg_stat_replication, it sent no reply while WAL waited for its flush"}
		down = "stopped answering"
	}
	if a.LostAt != nil {
		facts = append(facts, fmt.Sprintf("the sampler lost its session to it at %.1f s", *a.LostAt))
	}
	from := a.From // the first reading without it; the sampler may have lost it sooner
	if a.LostAt != nil && *a.LostAt < from && *a.LostAt >= a.LastSeen {
		from = *a.LostAt
	}
	when := fmt.Sprintf("from %.1f s of the window", from)
	if slices.ContainsFunc(away, func(x StandbyAway) bool { return x.Load != a.Load }) { // several steps' windows
		when = fmt.Sprintf("from %.1f s of the window at %s", from, count(a.Load, loadName))
	}
	if a.ToEnd {
		when += " to its end"
	} else {
		when += fmt.Sprintf(" to %.1f s", a.To)
	}
	who := fmt.Sprintf("commits waited for the synchronous standby %s, which %s %s", a.Standby, down, when)
	not := "it was not there, not saturated"
	if a.Silent {
		not = "it was not answering, not saturated"
	}
	return Saturation{Resource: ResSyncAway, Sentence: fmt.Sprintf("%s (%s): %s; %s", who, strings.Join(facts, "; "), waits, not)}
}
