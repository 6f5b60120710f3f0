package sample

import (
	"fmt"
	"maps"
	"slices"

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
			l := result.StandbyLag{Standby: name, Method: result.LagFromStatReplication}
			if _, ok := n.lagLast[name]; !ok {
				l.Absent = fmt.Sprintf("replay lag of %s not measured: pg_stat_replication on %s showed it NULL at every read of the window (it does before the walsender's first lag sample, and once the standby has replayed all WAL with none since)", name, n.info.Name)
			}
			sn.Lag = append(sn.Lag, l)
		}
		if n.prev.hiddenStandbys > 0 || !n.info.ReadAllStats {
			sn.Lag = append(sn.Lag, p.lagFromReplayLSN(st, n, primaries, standbys)...)
		}
		extra.Nodes[n.info.Name] = sn
	}
}

// lagFromReplayLSN measures, for a primary whose login lacks pg_read_all_stats, each
// sampled standby's lag from positions any login may read: bytes behind = the primary's
// pg_current_wal_lsn() − the standby's pg_last_wal_replay_lsn(), and, while it is behind,
// seconds since the commit time of the last transaction it replayed. With several
// primaries it cannot tell whose standby is whose, and says so.
func (p *PG) lagFromReplayLSN(st *result.Step, n *pgNode, primaries, standbys []*pgNode) []result.StandbyLag {
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
	var out []result.StandbyLag
	f, l := n.first, n.prev
	secs := l.at.Sub(f.at).Seconds()
	for _, s := range standbys {
		pre := result.PGStandbyFigure(s.info.Name, "")
		behind := sub64(l.lsn, s.prev.lsn)
		st.Counters[result.PGName(n.info.Name, pre+"behind_mb")] = float64(behind) / 1e6
		lagEnd, okEnd := replayLag(behind, s.prev.sinceReplay)
		lag := result.StandbyLag{Standby: s.info.Name, Method: result.LagFromReplayLSN}
		if okEnd {
			st.Counters[result.PGName(n.info.Name, pre+result.PGReplayLagSeconds)] = lagEnd
		} else {
			lag.Absent = fmt.Sprintf("replay lag in seconds of %s not measured: it is %d bytes behind and has replayed no transaction since it started", s.info.Name, behind)
		}
		if secs > 0 && !s.first.at.IsZero() {
			st.Counters[result.PGName(n.info.Name, pre+"replay_mb_per_s")] = float64(sub64(s.prev.lsn, s.first.lsn)) / 1e6 / secs
			if lagStart, ok := replayLag(sub64(f.lsn, s.first.lsn), s.first.sinceReplay); ok && okEnd {
				st.Counters[result.PGName(n.info.Name, pre+result.PGReplayLagGrowth)] = (lagEnd - lagStart) / secs
			}
		}
		out = append(out, lag)
	}
	return out
}

// replayLag is a standby's replay lag in seconds from what it reports itself: 0 when it has
// replayed all the primary's WAL, else the time since the last transaction it replayed
// was committed; unknown when it is behind and has replayed none since it started.
func replayLag(behind int64, sinceReplay *float64) (float64, bool) {
	switch {
	case behind <= 0:
		return 0, true
	case sinceReplay == nil:
		return 0, false
	}
	return max(*sinceReplay, 0), true
}
