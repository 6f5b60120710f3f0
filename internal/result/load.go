package result

import (
	"fmt"
	"strconv"
)

// The params of a step of emulated terminals (tpcc run --terminals): the terminals, and the
// pool of sessions that served them, which the runner ran as its VUs.
const (
	TerminalsKnob = "terminals"
	SessionsKnob  = "sessions"
)

// Load is a step's load as the lines and tables say it: so many of a knob ("8 threads",
// "2 VUs"), or emulated terminals over a pool of sessions ("30 terminals over 3 sessions");
// for a segment of a run split across load generators, the segment's share of the whole
// run's ("segment 1/3: 3 of 8 threads").
type Load struct {
	// Name is what the load counts: a sweep's knob as said ("threads", "VUs") or "terminals".
	Name string
	// N is what this run ran, Of the whole run's (N but in a segment).
	N, Of int
	// Sessions and SessionsOf are the pool of a step of terminals, this run's and the whole
	// run's; 0 for a load of VUs.
	Sessions, SessionsOf int
	// Segment is set when the run was a segment.
	Segment *Segment
}

// LoadOf is a step's load: its VUs, the whole run's counted by the param knob and said as
// name; or its terminals over the pool's sessions (the step's terminals section). seg is
// the run's segment (Meta.Segment), nil for a whole run.
func LoadOf(st *Step, seg *Segment, knob, name string) Load {
	if t, err := st.Terminals(); err == nil && t != nil {
		// A result of an older agbench has the pool as its "vus" param and no "sessions".
		return Load{Name: "terminals", N: t.Terminals, Of: paramInt(st.Params, TerminalsKnob, t.Terminals),
			Sessions: t.Sessions, SessionsOf: paramInt(st.Params, SessionsKnob, t.Sessions), Segment: seg}
	}
	return Load{Name: name, N: st.VUs, Of: paramInt(st.Params, knob, st.VUs), Segment: seg}
}

// paramInt is the param k as a whole number, or n when the step has none.
func paramInt(params map[string]string, k string, n int) int {
	if v, err := strconv.Atoi(params[k]); err == nil {
		return v
	}
	return n
}

// Terminals says whether the load is emulated terminals.
func (l Load) Terminals() bool { return l.Sessions > 0 }

// String is the load in words: "8 threads", "30 terminals over 3 sessions", "segment 1/3:
// 3 of 8 threads", "segment 0/3: 10 of 30 terminals over 1 of 3 sessions".
func (l Load) String() string {
	s := l.count(l.N, l.Of) + " " + l.Name
	if l.Terminals() {
		s += " over " + l.count(l.Sessions, l.SessionsOf) + " sessions"
	}
	if l.Segment != nil {
		s = fmt.Sprintf("segment %d/%d: %s", l.Segment.Index, l.Segment.Of, s)
	}
	return s
}

// Cell is the load in a table's first column, under Head: "8", "3 of 8" (a segment's
// share), "30/3" (terminals/sessions).
func (l Load) Cell() string {
	s := l.count(l.N, l.Of)
	if l.Terminals() {
		s += "/" + l.count(l.Sessions, l.SessionsOf)
	}
	return s
}

// Head is the header of the table's column of Cell: the load's name, "terminals/sessions"
// for terminals.
func (l Load) Head() string {
	if l.Terminals() {
		return "terminals/sessions"
	}
	return l.Name
}

// count is a share of a whole ("3 of 8") in a segment, the number alone otherwise.
func (l Load) count(n, of int) string {
	if l.Segment == nil {
		return strconv.Itoa(n)
	}
	return fmt.Sprintf("%d of %d", n, of)
}

// Concurrency is how many sessions ran the step's load at once: its VUs, or for a step of
// emulated terminals, whose VUs are absent, the pool's sessions that served them.
func (s *Step) Concurrency() int {
	if s.VUs > 0 {
		return s.VUs
	}
	if t, err := s.Terminals(); err == nil && t != nil {
		return t.Sessions
	}
	return 0
}
