package result

// DrillSyncGap is what a failover's new primary said of its synchronous standbys while it
// accepted writes, from the drill's sampler (every 200 ms, on the load's write address:
// synchronous_standby_names, synchronous_commit and the standbys streaming with sync_state
// sync or quorum in pg_stat_replication). Times are seconds from the fault, bounded by the
// samples: a span begins at the first sample that showed it and ends at the first sample
// that did not, or at the load's end when none did (Open).
//
// NoSync is the time the new primary acknowledged commits with no synchronous standby
// (synchronous_standby_names empty, or synchronous_commit local or off): a commit then is on
// that node alone. Waited is the time it named synchronous standbys but none streamed:
// commits waited for one instead. Each is absent when the new primary's state was never
// read (Note says why), and 0 when it was read and the state never held.
type DrillSyncGap struct {
	// Node is the new primary; SampledFrom is its first sample after the failover,
	// SampledTo its last, and Samples how many were read.
	Node        string   `json:"node"`
	SampledFrom *float64 `json:"sampled_from_seconds,omitempty"`
	SampledTo   *float64 `json:"sampled_to_seconds,omitempty"`
	Samples     int      `json:"samples"`

	NoSyncSeconds *float64 `json:"no_sync_seconds,omitempty"`
	NoSyncFrom    *float64 `json:"no_sync_from_seconds,omitempty"`
	NoSyncTo      *float64 `json:"no_sync_to_seconds,omitempty"`
	// NoSyncAcked counts the writes the new primary acknowledged within the NoSync span.
	NoSyncAcked int64 `json:"no_sync_acked"`

	WaitedSeconds *float64 `json:"waited_seconds,omitempty"`
	WaitedFrom    *float64 `json:"waited_from_seconds,omitempty"`
	WaitedTo      *float64 `json:"waited_to_seconds,omitempty"`

	// SyncAt is the first sample that showed a synchronous standby streaming, SyncStandbys
	// the standbys it named; absent when none did until the load's end (Open).
	SyncAt       *float64 `json:"sync_at_seconds,omitempty"`
	SyncStandbys []string `json:"sync_standbys,omitempty"`
	Open         bool     `json:"open,omitempty"`

	// Cause names the setting behind the state ("Patroni synchronous_mode without strict",
	// "synchronous_commit local"); OldPrimary is the failover's old primary, named when it
	// was the standby that ended the span. Note says why the figures are absent.
	Cause      string `json:"cause,omitempty"`
	OldPrimary string `json:"old_primary,omitempty"`
	Note       string `json:"note,omitempty"`
}

// NoSync is the time the new primary acknowledged commits with no synchronous standby:
// absent when g is (no failover, asynchronous commit) or was not measured.
func (g *DrillSyncGap) NoSync() *float64 {
	if g == nil {
		return nil
	}
	return g.NoSyncSeconds
}

// NoSyncOpen reports whether the time without a synchronous standby was still running at
// the load's end, so that NoSyncSeconds is only a lower bound. Open says the last sample
// still showed no synchronous standby streaming; of the two spans, the one that ends last
// is the one the load's end cut (a span without one followed by a wait is not open).
func (g *DrillSyncGap) NoSyncOpen() bool {
	return g != nil && g.Open && endsLater(g.NoSyncTo, g.WaitedTo)
}

// WaitedOpen reports whether commits were still waiting for a synchronous standby at the
// load's end: WaitedSeconds is then only a lower bound.
func (g *DrillSyncGap) WaitedOpen() bool {
	return g != nil && g.Open && endsLater(g.WaitedTo, g.NoSyncTo)
}

// endsLater reports whether a span ending at a (seconds from the fault) ends after one
// ending at b (absent: it never held).
func endsLater(a, b *float64) bool {
	return a != nil && (b == nil || *a > *b)
}
