package result

import (
	"cmp"
	"slices"
)

// The samplers' section of a step (Step.Extra["sample"]), written by internal/sample and
// read by internal/analyze.

// SampleStep is what the samplers keep of a step beyond its series and counters: per
// PostgreSQL node (by name), what was learnt of it and its top wait events.
type SampleStep struct {
	Nodes map[string]SampleNode `json:"nodes,omitempty"`
}

// SampleNode is one node's part of a step's sampler data.
type SampleNode struct {
	Info PGNodeInfo `json:"info"`
	// TopWaits are the node's most frequent wait events over the window, most sessions first.
	TopWaits []WaitEvent `json:"top_waits,omitempty"`
	// WaitSamples is how many times pg_stat_activity was sampled in the window.
	WaitSamples int `json:"wait_samples"`
	// Lag, on a primary, says per standby how its replication lag was measured, or why it
	// was not (then its lag figures are absent from the step, never 0).
	Lag []StandbyLag `json:"lag,omitempty"`
	// Absences, on a primary, are the stretches of the window in which a standby it had
	// streamed to was missing from its pg_stat_replication.
	Absences []StandbyAbsence `json:"standby_absences,omitempty"`
	// LostAt is when, in seconds of the window, the sampler lost the node (a query that
	// failed or timed out: a server stopped, frozen or cut off); nil when it did not.
	LostAt *float64 `json:"lost_at_s,omitempty"`
}

// StandbyAbsence is a stretch of the window in which a standby was missing from its
// primary's pg_stat_replication: its WAL receiver had disconnected (the standby stopped,
// crashed or cut off). Times are seconds of the window, from the sampler's readings (one a
// second): it was last seen at LastSeen and missing from From; it was seen again at To, or
// (ToEnd) was not back when the window closed. A Silent one was still listed but sent its
// primary no reply from From (its last reply; LastSeen too) to To while WAL it had not
// confirmed flushed waited (frozen, or cut off with the connection still open).
type StandbyAbsence struct {
	Standby string `json:"standby"`
	Silent  bool   `json:"silent,omitempty"`
	// Sync is set when pg_stat_replication called it synchronous (sync_state sync or
	// quorum) in a reading of the window: the primary's commits waited for it.
	Sync     bool    `json:"sync"`
	LastSeen float64 `json:"last_seen"`
	From     float64 `json:"from"`
	To       float64 `json:"to"`
	ToEnd    bool    `json:"to_end,omitempty"`
}

// How a standby's replication lag was measured (StandbyLag.Method).
const (
	// LagFromStatReplication: the primary's pg_stat_replication (write/flush/replay lag and
	// replay_lsn), which needs pg_read_all_stats (or pg_monitor, which includes it).
	LagFromStatReplication = "pg_stat_replication"
	// LagFromPositions: bytes behind = the primary's pg_current_wal_lsn() − the standby's
	// own pg_last_wal_replay_lsn(); seconds = since the primary was last at the standby's
	// replay position, from the primary's position read ten times a second (0 at the
	// primary's position: time the primary wrote nothing is no lag). Any login may call
	// both.
	LagFromPositions = "wal_positions"
)

// StandbyLag is how one standby's lag was measured from its primary, or why it was not.
type StandbyLag struct {
	// Standby names the standby; empty when the primary's statistics do not say which
	// standbys it has.
	Standby string `json:"standby,omitempty"`
	// Method is LagFromStatReplication or LagFromPositions; empty when not measured.
	Method string `json:"method,omitempty"`
	// Absent says why the lag was not measured, naming the privilege that would measure it.
	Absent string `json:"absent,omitempty"`
}

// PGNodeInfo is what the database sampler learnt of a node when it connected.
type PGNodeInfo struct {
	Name               string `json:"name"`
	VersionNum         int    `json:"version_num"`
	InRecovery         bool   `json:"in_recovery"`
	DataDirectory      string `json:"data_directory,omitempty"` // when the role may read it
	SharedBuffersBytes int64  `json:"shared_buffers_bytes"`
	DatabaseBytes      int64  `json:"database_bytes"` // all databases together
	HasStatIO          bool   `json:"has_stat_io"`    // pg_stat_io exists (16+)
	// Login is the role the sampler logged in as; ReadAllStats is true when it has the
	// privileges of pg_read_all_stats (a superuser, pg_monitor or pg_read_all_stats), without
	// which other sessions' statistics (pg_stat_replication's lags and positions) are NULL.
	Login        string `json:"login,omitempty"`
	ReadAllStats bool   `json:"read_all_stats"`
	// Remote is the server's address when it runs on another host than the samplers (then
	// nothing measured of this host describes it); empty when it is on this host.
	Remote string `json:"remote,omitempty"`
	// Postmaster is the server's postmaster pid on this host, from which its CPU was
	// measured in /proc (PGServerCPUCores); ServerCPUAbsent says why it was not.
	Postmaster      int    `json:"postmaster,omitempty"`
	ServerCPUAbsent string `json:"server_cpu_absent,omitempty"`
}

// WaitEvent is one wait event's mean number of sessions over a window. Class is its wait
// class (cpu, log, data_read, other_io, lwlock, lock, client, sync_rep, other).
type WaitEvent struct {
	Type     string  `json:"type"`
	Event    string  `json:"event"`
	Class    string  `json:"class"`
	Sessions float64 `json:"sessions"`
}

// SortWaitEvents orders wait events by sessions, most first, and those alike by type, event
// and class: one order every time (sort.Slice does not keep an order among equals: events of one type and event in two
// classes, such as no wait event while active and while idle in a transaction, came either way).
func SortWaitEvents(w []WaitEvent) {
	slices.SortFunc(w, func(a, b WaitEvent) int {
		return cmp.Or(cmp.Compare(b.Sessions, a.Sessions), cmp.Compare(a.Type, b.Type), cmp.Compare(a.Event, b.Event), cmp.Compare(a.Class, b.Class))
	})
}

// Sample returns the step's sampler section: nil when the step has none, an *ExtraError
// naming the section when it does not decode.
func (s *Step) Sample() (*SampleStep, error) {
	return extraOf[SampleStep](s.ExtraOf, ExtraSample)
}
