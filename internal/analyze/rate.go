package analyze

import (
	"fmt"

	"github.com/agbench/agbench/internal/units"
)

// A fixed-rate step (--rate) schedules its operations at start + i/rate. When the load
// generator or the server cannot keep up, the schedule falls behind and fewer operations
// are done than asked: the step then measured its own queue, not the asked load. Late
// starts alone do not judge it: the runner counts a start 1 ms behind its time as late, and
// a busy machine's timer jitter makes many of those on a schedule that is kept (a 50/s
// schedule of 5 ms queries on a shared 2-core machine: 42 of 101 late, all done).
const (
	// RateShortfallLimit is the largest share of the asked rate that may go undone before
	// the schedule counts as not kept.
	RateShortfallLimit = 0.10
)

// VRateNotKept is the verdict of a fixed-rate step whose schedule was not kept.
const VRateNotKept = "rate-not-kept"

// achievedRate is the operations a fixed-rate step started per second of its windows
// (result.DoneRate, as the table's done/s), and false when it was not measured.
func achievedRate(s Step) (float64, bool) {
	if s.DoneRate == nil {
		return 0, false
	}
	return *s.DoneRate, true
}

// rateNotKept judges the fixed-rate steps: the first (by load) that did more than
// RateShortfallLimit less than its asked rate (with its late starts), and how many more did so.
func rateNotKept(st []Step, loadName string) *Verdict {
	var bad []Step
	for _, s := range st {
		if s.Rate <= 0 {
			continue
		}
		got, ok := achievedRate(s)
		if !ok {
			continue
		}
		if got < (1-RateShortfallLimit)*s.Rate {
			bad = append(bad, s)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	s := bad[0]
	got, _ := achievedRate(s)
	msg := fmt.Sprintf("at %s the schedule asked %s/s and %s/s were done (%s)", count(s.Load, loadName), fmtRate(s.Rate), fmtRate(got), pct(got/s.Rate))
	if s.LateStarts > 0 {
		msg += fmt.Sprintf(", and %s operations started late", units.GroupInt(s.LateStarts))
	}
	if len(bad) > 1 {
		msg += fmt.Sprintf("; %d more step(s) fell behind", len(bad)-1)
	}
	return &Verdict{Code: VRateNotKept, Message: msg + ": the rate was not kept, so latencies include the queue behind the schedule and the step measured a lower load than asked"}
}

// fmtRate prints a rate with no needless fraction ("2000", "189", "0.5").
func fmtRate(x float64) string {
	if x >= 10 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.3g", x)
}
