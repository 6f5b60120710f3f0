package sample

import (
	"maps"
	"slices"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// presence follows, on a primary, each standby of its pg_stat_replication over the window:
// a standby that leaves it (its WAL receiver disconnected: stopped, crashed, cut off) is
// absent until it is seen again. Commits that wait for a synchronous standby that is absent
// wait because it is not there, not because it is busy (internal/analyze says which).
type presence struct {
	start    time.Time
	standbys map[string]*standbyPresence
}

// standbyPresence is one standby's presence so far.
type standbyPresence struct {
	sync bool
	// lastSeen is the last reading that listed it; goneAt the first reading after it that
	// did not (zero: present).
	lastSeen, goneAt time.Time
	absences         []result.StandbyAbsence
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
	}
	for name, sp := range p.standbys {
		if _, ok := c.standbys[name]; !ok && sp.goneAt.IsZero() {
			sp.goneAt = c.at
		}
	}
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
	}
	return out
}
