package result

import (
	"fmt"
	"strings"
)

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

// Sentence is the gap in one line, as a DBA reads it: "after the failover, commits were
// acknowledged with no synchronous standby for 12.3 s (from 4.1 s to 16.4 s: Patroni
// synchronous_mode without strict; primary, the old primary, rejoined as its synchronous
// standby at 16.4 s)"; "" when the new
// primary had a synchronous standby at every sample, or g is nil.
func (g *DrillSyncGap) Sentence() string {
	switch {
	case g == nil:
		return ""
	case g.Note != "":
		return "after the failover, synchronous standbys: – (" + g.Note + ")"
	case g.NoSyncSeconds != nil && *g.NoSyncSeconds > 0:
		open := g.NoSyncOpen()
		s := fmt.Sprintf("after the failover, commits were acknowledged with no synchronous standby for %s%s (%s%s)",
			atLeast(open), secs(g.NoSyncSeconds), g.span(g.NoSyncFrom, g.NoSyncTo, open), g.end())
		if g.NoSyncAcked > 0 {
			s += fmt.Sprintf("; %d commits acknowledged by %s alone meanwhile", g.NoSyncAcked, g.Node)
		}
		if g.WaitedSeconds != nil && *g.WaitedSeconds > 0 {
			s += fmt.Sprintf("; commits waited for a synchronous standby %s%s (from %s to %s)", atLeast(g.WaitedOpen()), secs(g.WaitedSeconds), secs(g.WaitedFrom), g.spanEnd(g.WaitedTo, g.WaitedOpen()))
		}
		return s
	case g.WaitedSeconds != nil && *g.WaitedSeconds > 0:
		open := g.WaitedOpen()
		return fmt.Sprintf("after the failover, commits waited for a synchronous standby for %s%s (%s%s); none was acknowledged without one",
			atLeast(open), secs(g.WaitedSeconds), g.span(g.WaitedFrom, g.WaitedTo, open), g.end())
	}
	return ""
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

// atLeast is "at least " for a span still open at the load's end: it lasted longer than
// measured.
func atLeast(open bool) string {
	if open {
		return "at least "
	}
	return ""
}

// NoSyncCell is the time without a synchronous standby for a table: "12.30", "0.40+" when
// still open at the load's end, "" when absent (the caller shows it absent).
func (g *DrillSyncGap) NoSyncCell() string {
	v := g.NoSync()
	if v == nil {
		return ""
	}
	if g.NoSyncOpen() && *v > 0 {
		return fmt.Sprintf("%.2f+", *v)
	}
	return fmt.Sprintf("%.2f", *v)
}

// span is "from 4.1 s to 16.4 s: cause"; an open span runs to the load's end, or, when the
// sampler stopped seeing the new primary before (its error, another node), to the last
// sample.
func (g *DrillSyncGap) span(from, to *float64, open bool) string {
	s := fmt.Sprintf("from %s to %s", secs(from), g.spanEnd(to, open))
	if g.Cause != "" {
		s += ": " + g.Cause
	}
	return s
}

// spanEnd is where a span ended: "16.4 s"; "the load's end, still none" when open; "its
// last sample at 5.0 s, still none then" when open and the sampler lost sight of the new
// primary before the load's end.
func (g *DrillSyncGap) spanEnd(to *float64, open bool) string {
	switch {
	case open && g.SampledTo != nil && to != nil && *to <= *g.SampledTo:
		return "its last sample at " + secs(to) + ", still none then"
	case open:
		return "the load's end, still none"
	}
	return secs(to)
}

// end says what ended the span: "; primary, the old primary, rejoined as its synchronous
// standby at 16.4 s" or "; standby2 synchronous from 3.0 s".
func (g *DrillSyncGap) end() string {
	if g.SyncAt == nil {
		return ""
	}
	if g.OldPrimary != "" && len(g.SyncStandbys) == 1 && g.SyncStandbys[0] == g.OldPrimary {
		return fmt.Sprintf("; %s, the old primary, rejoined as its synchronous standby at %s", g.OldPrimary, secs(g.SyncAt))
	}
	return fmt.Sprintf("; %s synchronous from %s", strings.Join(g.SyncStandbys, ", "), secs(g.SyncAt))
}

// secs is "4.1 s", "–" when absent (a result.json whose span lacks a bound).
func secs(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f s", *v)
}
