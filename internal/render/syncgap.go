package render

import (
	"fmt"
	"strings"

	"github.com/agbench/agbench/internal/result"
)

// SyncGapSentence is a failover's time without a synchronous standby in one line, as a DBA
// reads it: "after the failover, commits were acknowledged with no synchronous standby for
// 12.3 s (from 4.1 s to 16.4 s: Patroni synchronous_mode without strict; primary, the old
// primary, rejoined as its synchronous standby at 16.4 s)"; "" when the new primary had a
// synchronous standby at every sample, or g is nil. The drill's terminal table and the
// report's chart titles both print it.
func SyncGapSentence(g *result.DrillSyncGap) string {
	switch {
	case g == nil:
		return ""
	case g.Note != "":
		return "after the failover, synchronous standbys: – (" + g.Note + ")"
	case g.NoSyncSeconds != nil && *g.NoSyncSeconds > 0:
		open := g.NoSyncOpen()
		s := fmt.Sprintf("after the failover, commits were acknowledged with no synchronous standby for %s%s (%s%s)",
			atLeast(open), spanSecs(g.NoSyncSeconds), gapSpan(g, g.NoSyncFrom, g.NoSyncTo, open), gapEnd(g))
		if g.NoSyncAcked > 0 {
			s += fmt.Sprintf("; %d commits acknowledged by %s alone meanwhile", g.NoSyncAcked, g.Node)
		}
		if g.WaitedSeconds != nil && *g.WaitedSeconds > 0 {
			s += fmt.Sprintf("; commits waited for a synchronous standby %s%s (from %s to %s)", atLeast(g.WaitedOpen()),
				spanSecs(g.WaitedSeconds), spanSecs(g.WaitedFrom), gapSpanEnd(g, g.WaitedTo, g.WaitedOpen()))
		}
		return s
	case g.WaitedSeconds != nil && *g.WaitedSeconds > 0:
		open := g.WaitedOpen()
		return fmt.Sprintf("after the failover, commits waited for a synchronous standby for %s%s (%s%s); none was acknowledged without one",
			atLeast(open), spanSecs(g.WaitedSeconds), gapSpan(g, g.WaitedFrom, g.WaitedTo, open), gapEnd(g))
	}
	return ""
}

// NoSyncCell is the time without a synchronous standby for a table: "12.30", "0.40+" when
// still open at the load's end, "" when absent (the caller shows it absent).
func NoSyncCell(g *result.DrillSyncGap) string {
	v := g.NoSync()
	if v == nil {
		return ""
	}
	if g.NoSyncOpen() && *v > 0 {
		return fmt.Sprintf("%.2f+", *v)
	}
	return fmt.Sprintf("%.2f", *v)
}

// atLeast is "at least " for a span still open at the load's end: it lasted longer than
// measured.
func atLeast(open bool) string {
	if open {
		return "at least "
	}
	return ""
}

// gapSpan is "from 4.1 s to 16.4 s: cause"; an open span runs to the load's end, or, when
// the sampler stopped seeing the new primary before (its error, another node), to the last
// sample.
func gapSpan(g *result.DrillSyncGap, from, to *float64, open bool) string {
	s := fmt.Sprintf("from %s to %s", spanSecs(from), gapSpanEnd(g, to, open))
	if g.Cause != "" {
		s += ": " + g.Cause
	}
	return s
}

// gapSpanEnd is where a span ended: "16.4 s"; "the load's end, still none" when open; "its
// last sample at 5.0 s, still none then" when open and the sampler lost sight of the new
// primary before the load's end.
func gapSpanEnd(g *result.DrillSyncGap, to *float64, open bool) string {
	switch {
	case open && g.SampledTo != nil && to != nil && *to <= *g.SampledTo:
		return "its last sample at " + spanSecs(to) + ", still none then"
	case open:
		return "the load's end, still none"
	}
	return spanSecs(to)
}

// gapEnd says what ended the span: "; primary, the old primary, rejoined as its synchronous
// standby at 16.4 s" or "; standby2 synchronous from 3.0 s".
func gapEnd(g *result.DrillSyncGap) string {
	if g.SyncAt == nil {
		return ""
	}
	if g.OldPrimary != "" && len(g.SyncStandbys) == 1 && g.SyncStandbys[0] == g.OldPrimary {
		return fmt.Sprintf("; %s, the old primary, rejoined as its synchronous standby at %s", g.OldPrimary, spanSecs(g.SyncAt))
	}
	return fmt.Sprintf("; %s synchronous from %s", strings.Join(g.SyncStandbys, ", "), spanSecs(g.SyncAt))
}

// spanSecs is "4.1 s", "–" when absent (a result.json whose span lacks a bound).
func spanSecs(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f s", *v)
}
