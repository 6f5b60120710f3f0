package runner

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/workload"
)

// Each VU notes the stretches of the window in which it completed no operation (a session
// waiting for a lock, on a frozen node, across a partition, or being made again) while
// the others may have gone on: result.Step.VUQuiet, judged by internal/analyze.
const (
	// QuietMin is the shortest such stretch recorded.
	QuietMin = time.Second
	// maxQuietPerVU bounds the stretches kept per VU: the longest.
	maxQuietPerVU = 16
)

// quietWatch is one VU's record of its quiet stretches. Only its VU writes it, on each
// completed operation (with the clock reading it already made: a subtraction, a compare
// and two stores); the runner reads it after the VUs have ended.
type quietWatch struct {
	// last is when the VU's last operation completed (zero: none yet).
	last time.Time
	// ended is set when the VU left its loop on its own (its iterations done, its session
	// given up), not because the step ended: its quiet after that is no stretch.
	ended bool
	// reconnected is set when its session was made again since its last completed operation.
	reconnected bool
	stretches   []result.VUQuiet
}

// open starts the VU's watch at the window's start ws, when it first measures.
func (q *quietWatch) open(ws time.Time) {
	if q.last.Before(ws) {
		q.last = ws
	}
}

// note keeps the stretch from the VU's last completed operation to now, when its
// operation of the window (opened at ws) completed; w names the node. The VU's loop checks
// now.Sub(q.last) >= QuietMin itself (a call would cost more than the check), then sets
// q.last to now and q.reconnected to false.
func (q *quietWatch) note(vu int, w workload.Worker, ws, now time.Time) {
	q.add(result.VUQuiet{VU: vu, From: q.last.Sub(ws).Seconds(), To: now.Sub(ws).Seconds(),
		Node: landedOn(w), Reconnected: q.reconnected})
}

// add keeps a stretch, dropping the shortest when over maxQuietPerVU.
func (q *quietWatch) add(s result.VUQuiet) {
	q.stretches = append(q.stretches, s)
	if len(q.stretches) > maxQuietPerVU {
		i := 0
		for j, x := range q.stretches {
			if x.To-x.From < q.stretches[i].To-q.stretches[i].From {
				i = j
			}
		}
		q.stretches = slices.Delete(q.stretches, i, i+1)
	}
}

// landedOn names where a worker's sessions are ("" when the workload does not say).
func landedOn(w workload.Worker) string {
	l, ok := w.(workload.Lander)
	if !ok {
		return ""
	}
	var nodes []string
	for _, x := range l.Landings() {
		if x.Node != "" && !slices.Contains(nodes, x.Node) {
			nodes = append(nodes, x.Node)
		}
	}
	return strings.Join(nodes, ",")
}

// vuQuiet closes the VUs' records at the window [ws, end]: a VU still running then and
// quiet since its last completed operation (or the window's start) for QuietMin or more
// had a stretch to the end; a stretch noted after the end (an operation that completed as
// the window closed) is cut there. It returns every VU's stretches, by VU and time.
func vuQuiet(qs []quietWatch, ws []workload.Worker, first int, start, end time.Time) []result.VUQuiet {
	win := end.Sub(start).Seconds()
	var out []result.VUQuiet
	for i := range qs {
		q := &qs[i]
		from := q.last
		if from.Before(start) {
			from = start
		}
		if !q.ended && end.Sub(from) >= QuietMin {
			q.add(result.VUQuiet{VU: first + i, From: from.Sub(start).Seconds(), To: win, Node: landedOn(ws[i]), Reconnected: q.reconnected})
		}
		for _, s := range q.stretches {
			if s.To >= win {
				s.To, s.ToEnd = win, true
			}
			if s.To-s.From >= QuietMin.Seconds() {
				out = append(out, s)
			}
		}
	}
	slices.SortFunc(out, func(a, b result.VUQuiet) int {
		if a.VU != b.VU {
			return a.VU - b.VU
		}
		return cmp.Compare(a.From, b.From)
	})
	return out
}
