package sample

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// lag says, on each primary of the window, how its standbys' replication lag was measured
// (the step's sample section) and, where its login could not read pg_stat_replication,
// measures it from the standbys' own replay positions when the sampler watches them.
// What it cannot measure stays absent from the step's counters, with a warning that names
// the privilege that would measure it.
func (p *PG) lag(st *result.Step, extra result.SampleStep) {
	var primaries, standbys []*pgNode
	for _, n := range p.nodes {
		if n.err != nil || n.prev.at.IsZero() {
			continue
		}
		if n.prev.inRecovery {
			standbys = append(standbys, n)
		} else {
			primaries = append(primaries, n)
		}
	}
	for _, n := range primaries {
		sn := extra.Nodes[n.info.Name]
		for _, name := range slices.Sorted(maps.Keys(n.prev.standbys)) {
			sn.Lag = append(sn.Lag, p.statReplicationLag(st, n, name, primaries, standbys))
		}
		if n.prev.hiddenStandbys > 0 || !n.info.ReadAllStats {
			sn.Lag = append(sn.Lag, p.lagFromPositions(st, n, primaries, standbys)...)
		}
		extra.Nodes[n.info.Name] = sn
	}
}

// statReplicationLag says how the lag of a standby in primary n's pg_stat_replication was
// measured: there, when a read of the window measured it; else from positions, when the
// sampler watches that standby (pg_stat_replication shows NULL before the walsender's
// first lag sample, as after a standby connects); else not.
func (p *PG) statReplicationLag(st *result.Step, n *pgNode, name string, primaries, standbys []*pgNode) result.StandbyLag {
	if len(n.lagReads[name]) > 0 {
		return result.StandbyLag{Standby: name, Method: result.LagFromStatReplication}
	}
	if len(primaries) == 1 {
		for _, s := range standbys {
			if s.info.Name == name {
				return p.standbyLag(st, n.info.Name, primaryHistory(n.positions), s, windowEnd(st, n))
			}
		}
	}
	return result.StandbyLag{Standby: name, Method: result.LagFromStatReplication, Absent: fmt.Sprintf(
		"replay lag of %s not measured: pg_stat_replication on %s showed it NULL while the standby was behind at every read of the window (it does before the walsender's first lag sample), and the sampler does not watch the standby (its replay position needs no privilege)", name, n.info.Name)}
}

// windowEnd is the end of the step's window, or primary n's last reading when it has none.
func windowEnd(st *result.Step, n *pgNode) time.Time {
	if st.Window.End.IsZero() {
		return n.prev.at
	}
	return st.Window.End
}

// lagFromPositions measures, for a primary whose login lacks pg_read_all_stats, each
// sampled standby's lag from positions any login may read (positions.go): at each of the
// standby's readings, bytes behind = the primary's pg_current_wal_lsn() − the standby's
// pg_last_wal_replay_lsn(), and seconds = since the primary was last at the standby's
// position. With several primaries it cannot tell whose standby is whose, and says so.
func (p *PG) lagFromPositions(st *result.Step, n *pgNode, primaries, standbys []*pgNode) []result.StandbyLag {
	why := fmt.Sprintf("the login %s lacks pg_read_all_stats (pg_monitor includes it), so pg_stat_replication's lag columns are NULL for it", n.info.Login)
	absent := func(reason string) []result.StandbyLag {
		msg := fmt.Sprintf("replication lag not measured on %s: %s; %s", n.info.Name, why, reason)
		st.Warnings = append(st.Warnings, msg)
		return []result.StandbyLag{{Absent: msg}}
	}
	switch {
	case len(standbys) == 0 && n.prev.hiddenStandbys > 0:
		return absent(fmt.Sprintf("%d standby(s) stream from it and the sampler watches none of them (their replay position needs no privilege)", n.prev.hiddenStandbys))
	case len(standbys) == 0:
		return nil
	case len(primaries) > 1:
		return absent("with several primaries sampled, their standbys cannot be told apart")
	}
	hist := primaryHistory(n.positions)
	var out []result.StandbyLag
	for _, s := range standbys {
		l := p.standbyLag(st, n.info.Name, hist, s, windowEnd(st, n))
		if l.Absent != "" {
			l.Absent += "; a login with pg_read_all_stats (pg_monitor includes it) would read it in pg_stat_replication"
		}
		out = append(out, l)
	}
	return out
}

// standbyLag puts one standby's lag from positions in the step: its lag and bytes behind
// as series from its readings of the statistics' interval, the window's figures
// (windowLag) from all its readings of the window, and its replay rate.
func (p *PG) standbyLag(st *result.Step, primary string, hist []posRead, s *pgNode, end time.Time) result.StandbyLag {
	pre := result.PGStandbyFigure(s.info.Name, "")
	name := func(fig string) string { return result.PGName(primary, pre+fig) }
	series := map[string]*result.TimeSeries{}
	var reads []lagRead
	for _, r := range s.positions {
		if r.at.Before(s.start) || !r.inRecovery {
			continue
		}
		v, within, ok := lagAt(hist, r.at, r.lsn)
		if !ok {
			continue
		}
		behind, _ := behindAt(hist, r.at, r.lsn)
		reads = append(reads, lagRead{at: r.at, lag: v, behind: behind, within: within})
		if r.stat {
			result.AddPoint(series, pre+result.PGReplayLagSeconds, "s", s.start, r.at, v)
			result.AddPoint(series, pre+"behind_mb", "MB", s.start, r.at, float64(behind)/1e6)
			result.AddPoint(series, pre+result.PGReplayLagWithin, "s", s.start, r.at, within)
		}
	}
	for k, ts := range series {
		st.Series[result.PGName(primary, k)] = *ts
	}
	last, growth, grew, ok := windowLag(reads, end)
	if !ok {
		return result.StandbyLag{Standby: s.info.Name, Absent: fmt.Sprintf("replay lag of %s not measured: %s", s.info.Name, lagBounds(primary, hist, s.prev))}
	}
	st.Counters[name(result.PGReplayLagSeconds)] = last.lag
	st.Counters[name(result.PGReplayLagWithin)] = last.within
	if last.within > lagWithinWarn {
		st.Warnings = append(st.Warnings, fmt.Sprintf("replay lag of %s (%.2f s) is known to within ±%.2f s only: "+
			"%s's WAL position was read too seldom around the moment it was at the standby's (a busy machine reads late)",
			s.info.Name, last.lag, last.within, primary))
	}
	st.Counters[name("behind_mb")] = float64(last.behind) / 1e6
	if grew {
		st.Counters[name(result.PGReplayLagGrowth)] = growth
	}
	if secs := s.prev.at.Sub(s.first.at).Seconds(); secs > 0 {
		st.Counters[name("replay_mb_per_s")] = float64(sub64(s.prev.lsn, s.first.lsn)) / 1e6 / secs
	}
	return result.StandbyLag{Standby: s.info.Name, Method: result.LagFromPositions}
}

// lagWithinWarn is the uncertainty of a lag from positions past which the step says so: five
// intervals of the wait loop's readings (normally ±0.05 s).
const lagWithinWarn = 0.5

// lagBounds says what is known of the lag of a standby that was behind every position of
// its primary the sampler read, at its last reading l: more than the time since the
// primary's first reading (the primary was past the standby's position already), and at
// most the time since the commit of the last transaction it replayed
// (pg_last_xact_replay_timestamp(): the primary was at or before its position then).
func lagBounds(primary string, hist []posRead, l pgCounters) string {
	if len(hist) == 0 {
		return "no position of " + primary + " was read"
	}
	out := fmt.Sprintf("it was behind the first position of %s the sampler read, so more than %.1f s behind", primary, l.at.Sub(hist[0].at).Seconds())
	if l.sinceReplay != nil {
		out += fmt.Sprintf(", and at most %.1f s (the time since the commit of the last transaction it replayed)", *l.sinceReplay)
	}
	return out
}
