package result

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Segment says that a run was one segment of several load generators (agbench --segment
// i/N), which agbench merge makes one result of.
type Segment struct {
	// Index and Of are the segment's number (0-based) and the number of segments.
	Index int `json:"index"`
	Of    int `json:"of"`
	// Run names the run the segments share: their barrier's key in the target database.
	Run string `json:"run"`
	// Starts are, per step, when the segments agreed to begin it and when this one began.
	Starts []SegmentStart `json:"starts,omitempty"`
}

// SegmentStart is when a segment began one step's load, after the segments' barrier.
type SegmentStart struct {
	// Step is the step's index.
	Step int `json:"step"`
	// At is the start the segments agreed on, by the target database's clock.
	At time.Time `json:"at"`
	// Began is when this segment let its load go, by the database's clock (this host's
	// clock plus ClockOffsetSeconds, the database's clock minus this host's as measured
	// over the barrier's queries).
	Began              time.Time `json:"began"`
	ClockOffsetSeconds float64   `json:"clock_offset_seconds"`
}

// Merged says that a result was merged from the results of a run's segments.
type Merged struct {
	// Of is the number of segments the run was split into; Segments are those merged, in
	// order, and Missing the numbers of those not given (a merged run with any missing is
	// incomplete).
	Of       int             `json:"of"`
	Segments []MergedSegment `json:"segments"`
	Missing  []int           `json:"missing,omitempty"`
}

// MergedSegment is one segment's part in a merged result.
type MergedSegment struct {
	Index int    `json:"index"`
	Host  string `json:"host"`
	// Path is the segment's result file as it was given to the merge.
	Path             string         `json:"path"`
	Complete         bool           `json:"complete"`
	IncompleteReason string         `json:"incomplete_reason,omitempty"`
	Starts           []SegmentStart `json:"starts,omitempty"`
}

// Lines say the merge in words, one line each: the segments merged (with their hosts, and
// which did not complete), those missing, and how far apart the segments began each step.
func (m *Merged) Lines() []string {
	segs := make([]string, 0, len(m.Segments))
	for _, s := range m.Segments {
		state := ""
		if !s.Complete {
			state = ", incomplete"
		}
		segs = append(segs, fmt.Sprintf("%d (%s%s)", s.Index, s.Host, state))
	}
	out := []string{fmt.Sprintf("%d of %d merged: %s", len(m.Segments), m.Of, strings.Join(segs, ", "))}
	if len(m.Missing) > 0 {
		miss := make([]string, len(m.Missing))
		for i, n := range m.Missing {
			miss[i] = fmt.Sprint(n)
		}
		out = append(out, fmt.Sprintf("missing: %s (the run is incomplete)", strings.Join(miss, ", ")))
	}
	spread := m.StartSpread()
	steps := make([]int, 0, len(spread))
	for s := range spread {
		steps = append(steps, s)
	}
	sort.Ints(steps)
	for _, s := range steps {
		out = append(out, fmt.Sprintf("step %d began within %.1f ms of each other (by the database's clock)", s+1, spread[s]*1000))
	}
	return out
}

// StartSpread is, per step, how far apart the segments began it: the latest Began minus
// the earliest, in seconds (absent for a step that fewer than two segments record).
func (m *Merged) StartSpread() map[int]float64 {
	first, last := map[int]time.Time{}, map[int]time.Time{}
	n := map[int]int{}
	for _, s := range m.Segments {
		for _, st := range s.Starts {
			if f, ok := first[st.Step]; !ok || st.Began.Before(f) {
				first[st.Step] = st.Began
			}
			if l, ok := last[st.Step]; !ok || st.Began.After(l) {
				last[st.Step] = st.Began
			}
			n[st.Step]++
		}
	}
	out := map[int]float64{}
	for step, c := range n {
		if c > 1 {
			out[step] = last[step].Sub(first[step]).Seconds()
		}
	}
	return out
}
