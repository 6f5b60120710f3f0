package sample

import (
	"maps"
	"slices"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// presence follows, on a primary, each standby of its pg_stat_replication over the window:
// a standby that leaves it (its WAL receiver disconnected: stopped, crashed, cut off) is
// absent until it is seen again; one still listed that sent no reply for SilentReplySec or
// more while WAL it had not confirmed flushed waited (frozen, or cut off without the
// connection closing) is silent from its last reply until it answers again. Commits that
// wait for a synchronous standby that is absent or silent wait because it is not there, not
// because it is busy (internal/analyze says which).
// SilentReplySec is how long a standby with WAL to confirm may go without a reply before it
// counts as silent: a live one replies as soon as it has written or flushed what it was
// sent (and at least every wal_receiver_status_interval, 10 s by default, when idle).
const SilentReplySec = 5.0

type presence struct {
	start    time.Time
	standbys map[string]*standbyPresence
}

// standbyPresence is one standby's presence so far.
type standbyPresence struct {
	sync bool
	// lastSeen is the last reading that listed it; goneAt the first reading after it that
	// did not (zero: present); silentFrom its last reply while it is silent (zero: not).
	lastSeen, goneAt, silentFrom time.Time
	absences                     []result.StandbyAbsence
}

func newPresence(start time.Time) *presence {
	return &presence{start: start, standbys: map[string]*standbyPresence{}}
}

// note takes one reading of the node: standbys listed are present, those listed before and
// not now have left. Hidden rows (a login without pg_read_all_stats) name no standby and are
// not followed.
func (p *presence) note(c pgCounters) {
	for name, s := range c.standbys {
		sp := p.standbys[name]
		if sp == nil {
			sp = &standbyPresence{}
			p.standbys[name] = sp
		}
		if !sp.goneAt.IsZero() {
			sp.absences = append(sp.absences, p.absence(name, sp, c.at, false))
			sp.goneAt = time.Time{}
		}
		sp.sync = sp.sync || s.sync
		sp.lastSeen = c.at
		switch silent := s.sinceReply >= SilentReplySec && s.unflushed > 0; {
		case silent && sp.silentFrom.IsZero():
			sp.silentFrom = c.at.Add(-time.Duration(s.sinceReply * float64(time.Second)))
		case !silent && !sp.silentFrom.IsZero():
			sp.absences = append(sp.absences, p.silence(name, sp, c.at, false))
			sp.silentFrom = time.Time{}
		}
	}
	for name, sp := range p.standbys {
		if _, ok := c.standbys[name]; !ok && sp.goneAt.IsZero() {
			sp.goneAt = c.at
			if !sp.silentFrom.IsZero() { // silent until it left
				sp.absences = append(sp.absences, p.silence(name, sp, c.at, false))
				sp.silentFrom = time.Time{}
			}
		}
	}
}

// silence is a stretch from a silent standby's last reply to the reading at to.
func (p *presence) silence(name string, sp *standbyPresence, to time.Time, toEnd bool) result.StandbyAbsence {
	sec := func(t time.Time) float64 { return t.Sub(p.start).Seconds() }
	return result.StandbyAbsence{Standby: name, Sync: sp.sync, Silent: true, LastSeen: sec(sp.silentFrom), From: sec(sp.silentFrom), To: sec(to), ToEnd: toEnd}
}

func (p *presence) absence(name string, sp *standbyPresence, to time.Time, toEnd bool) result.StandbyAbsence {
	sec := func(t time.Time) float64 { return t.Sub(p.start).Seconds() }
	return result.StandbyAbsence{Standby: name, Sync: sp.sync, LastSeen: sec(sp.lastSeen), From: sec(sp.goneAt), To: sec(to), ToEnd: toEnd}
}

// result returns the window's absences, by standby and time; a standby still absent at end
// was absent to the window's end.
func (p *presence) result(end time.Time) []result.StandbyAbsence {
	var out []result.StandbyAbsence
	for _, name := range slices.Sorted(maps.Keys(p.standbys)) {
		sp := p.standbys[name]
		out = append(out, sp.absences...)
		if !sp.goneAt.IsZero() {
			out = append(out, p.absence(name, sp, end, true))
		}
		if !sp.silentFrom.IsZero() {
			out = append(out, p.silence(name, sp, end, true))
		}
	}
	return out
}
