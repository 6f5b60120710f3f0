package sample

import (
	"sort"
	"time"
)

// A standby's lag in time, read from what any login may read: the standby's replay
// position (pg_last_wal_replay_lsn()) against the primary's write position
// (pg_current_wal_lsn()) sampled over time. A standby that has replayed up to position r
// at time t shows the primary's data as of the last moment the primary was at r, so its
// lag is t minus that moment; WAL the primary did not write (an idle primary) adds none,
// and a standby at the primary's position has lag 0. The moment is interpolated between
// the two readings of the primary around it, so the wait loop reads each node's position
// ten times a second: the figure is within about one reading interval of pg_stat_replication's
// own replay_lag, which the walsender interpolates the same way from the times it sent WAL.

// posRead is one reading of a node's WAL position: written on a primary, replayed on a
// standby, in bytes; at is the middle of the round trip that read it.
type posRead struct {
	at         time.Time
	lsn        int64
	inRecovery bool
	// stat is set on the readings of the statistics' interval (once a second), from which
	// the lag's series is drawn; the wait loop's are between them.
	stat bool
}

// maxPositions bounds a node's history of positions (about an hour at the wait interval):
// a standby further behind than the history reaches has its lag absent, with the reason.
const maxPositions = 36000

// positionQuery reads the node's role and WAL position; the position is NULL on a standby
// that has replayed nothing yet.
const positionQuery = `SELECT pg_is_in_recovery(),
  pg_wal_lsn_diff(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END, '0/0')::bigint`

// notePosition adds a reading to the node's history, which lasts across windows: a
// standby's position may be from before the window opened.
func (n *pgNode) notePosition(r posRead, stat bool) {
	r.stat = stat
	if r.lsn <= 0 || r.at.IsZero() {
		return
	}
	n.positions = append(n.positions, r)
	if len(n.positions) > 2*maxPositions {
		n.positions = append([]posRead(nil), n.positions[len(n.positions)-maxPositions:]...)
	}
}

// midpoint is the middle of a round trip, the best guess of when the server read its
// position.
func midpoint(before, after time.Time) time.Time { return before.Add(after.Sub(before) / 2) }

// primaryHistory is the readings of a node taken while it was a primary: its write
// position over time, which never goes back.
func primaryHistory(ps []posRead) []posRead {
	var out []posRead
	for _, r := range ps {
		if !r.inRecovery && (len(out) == 0 || r.lsn >= out[len(out)-1].lsn && !r.at.Before(out[len(out)-1].at)) {
			out = append(out, r)
		}
	}
	return out
}

// lagAt is the lag, in seconds, of a standby that had replayed up to replayed at the moment
// at, against its primary's history: 0 when it had replayed all the primary had written at
// the primary's last reading before at; else at minus the last moment the primary was at
// replayed or before, which lies between the two readings around it. within is how far the
// figure may be from the true lag: the moment is interpolated by bytes between the
// readings, except at a position the primary held when read (an idle primary, then a
// burst), where it may have stayed until any moment before its next reading and the middle
// is taken. A busy machine that reads the primary late widens it. It is not known (false)
// before the primary's first reading, or when the primary's first reading was already past
// replayed.
func lagAt(primary []posRead, at time.Time, replayed int64) (lag, within float64, ok bool) {
	k := sort.Search(len(primary), func(i int) bool { return primary[i].at.After(at) }) - 1
	if k < 0 {
		return 0, 0, false
	}
	if replayed >= primary[k].lsn {
		return 0, 0, true
	}
	// i: the last reading at or before k at which the primary had not passed replayed.
	i := sort.Search(k+1, func(i int) bool { return primary[i].lsn > replayed }) - 1
	if i < 0 {
		return 0, 0, false
	}
	a, b := primary[i], primary[i+1]
	gap := b.at.Sub(a.at)
	left := midpoint(a.at, b.at)
	within = gap.Seconds() / 2
	if replayed > a.lsn {
		frac := float64(replayed-a.lsn) / float64(b.lsn-a.lsn)
		left = a.at.Add(time.Duration(frac * float64(gap)))
		within = gap.Seconds()
	}
	return max(at.Sub(left).Seconds(), 0), within, true
}

// behindAt is how many bytes of WAL the primary had written, at its last reading before at,
// that the standby had not replayed.
func behindAt(primary []posRead, at time.Time, replayed int64) (int64, bool) {
	k := sort.Search(len(primary), func(i int) bool { return primary[i].at.After(at) }) - 1
	if k < 0 {
		return 0, false
	}
	return sub64(primary[k].lsn, replayed), true
}
