package drill

import (
	"fmt"
	"math"
	"time"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/stats"
)

// A failover by other means (observe, no Patroni REST API) is seen when the primary stops
// answering as a writable node. A switchover begins before that: the old primary is demoted
// (Patroni checkpoints it, then shuts it down), and its writes fall for a second or more
// while it still answers. The cycle's fault is then the first moment writes degraded:
// the start of the run of intervals, just before the primary stopped answering, in which
// acknowledged writes were below degradedFraction of their steady level.

// degradedFraction is the share of the steady write rate below which an interval's writes
// have degraded.
const degradedFraction = 0.5

// steadyWarmup is the load's first stretch, left out of its steady level (sessions connect).
const steadyWarmup = time.Second

// minSteadyIntervals is the fewest intervals of load before the fault that give a steady
// level.
const minSteadyIntervals = 10

// degraded is when a cycle's writes first degraded before the fault was seen.
type degraded struct {
	from   time.Time // the start of the run of degraded intervals (the fault as seen, when none)
	n      int       // intervals in the run; 0: writes did not fall before the fault
	steady float64   // the steady level: writes per interval
	// dips is the longest run of intervals in a row that the steady load itself spent below
	// the degraded level: a dip that long just before the fault cannot be told from it, so
	// the fault may have begun up to dips+1 intervals after from.
	dips int
	// low and of count the steady load's intervals below the degraded level, and all of them.
	low, of int
	ok      bool // false: the load before the fault was too short to know its steady level
}

// chanceDip is how seldom chance may give a run of the steady load's dips, just before the
// fault, longer than the precision a fault's start is stated to.
const chanceDip = 0.01

// within is how much later than from the fault may have begun: a run of dips as long as the
// longest the steady load had, and as long as its share of dipping intervals gives by chance
// more than chanceDip of the time. The share is taken at its upper bound (Agresti and
// Coull's "plus two" estimate): a few dips in two seconds of load say little of how often
// it dips, and a 200 ms bound from one dip in 20 intervals was missed by a run of two at a
// CI load of 27 (the fault timed 260 ms before it began).
func (d degraded) within() time.Duration {
	r := d.dips
	if d.low > 0 {
		p := float64(d.low+2) / float64(d.of+4)
		for math.Pow(p, float64(r+1)) > chanceDip {
			r++
		}
	}
	return time.Duration(r+1) * interval
}

// degradedFrom finds, for a fault seen at at, the run of whole intervals just before it
// whose acknowledged writes were below degradedFraction of the steady level: the median per
// interval of the load before that run, its warm-up left out (degradedRun).
func (tl *timeline) degradedFrom(at time.Time) degraded {
	if tl.start.IsZero() || at.Before(tl.start) {
		return degraded{from: at}
	}
	f := int(at.Sub(tl.start) / interval) // the interval holding at
	warm := int(steadyWarmup / interval)
	if f-warm < minSteadyIntervals {
		return degraded{from: at}
	}
	// The timeline grows as writes are acknowledged: intervals after the last acknowledged
	// write (writes blocked up to the fault) acknowledged none.
	writes := make([]float64, f)
	for i := range min(f, len(tl.writes)) {
		writes[i] = float64(tl.writes[i])
	}
	k, steady := degradedRun(writes, warm)
	d := degraded{from: at, steady: steady, ok: true}
	low := func(i int) bool { return writes[i] < degradedFraction*d.steady }
	for i := warm; i < k; i++ {
		d.of++
		if low(i) {
			d.low++
		}
	}
	for i, run := warm, 0; i < k; i++ {
		if run = 0; low(i) {
			for run = 1; i+run < k && low(i+run); run++ {
			}
			d.dips = max(d.dips, run)
			i += run
		}
	}
	if k < len(writes) {
		d.from, d.n = tl.start.Add(time.Duration(k)*interval), len(writes)-k
	}
	return d
}

// degradedRun is where the run of degraded intervals at the end of writes begins (len(writes)
// when there is none) and the steady level it is judged by: the longest run all of whose
// intervals are below degradedFraction of the median of the intervals before it (from warm
// on), leaving minSteadyIntervals or more before it. The level is taken before the run, not
// over it: writes blocked for longer than the load had been steady would otherwise pull
// the median down to their own level and hide themselves.
func degradedRun(writes []float64, warm int) (int, float64) {
	f := len(writes)
	steady := stats.Median(writes[warm:f])
	k := f
	// A run's intervals are below half of some level no higher than the highest interval,
	// so it lies within the stretch at the end below half of that: look no further back.
	top := 0.0
	for _, w := range writes[warm:f] {
		top = max(top, w)
	}
	most := 0.0
	for j := f - 1; j-warm >= minSteadyIntervals; j-- {
		if most = max(most, writes[j]); most >= degradedFraction*top {
			break
		}
		if s := stats.Median(writes[warm:j]); most < degradedFraction*s {
			k, steady = j, s
		}
	}
	return k, steady
}

// timeFaultFromWrites moves an observed cycle's fault back to when its writes first
// degraded (degradedFrom), and says in dc.FaultStart which start was used; the moment the
// primary stopped answering stays an event of its own.
func (t *tally) timeFaultFromWrites(dc *result.DrillCycle, primary string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	seen := t.faultAt
	d := t.tl.degradedFrom(seen)
	from, n, steady := d.from, d.n, d.steady
	per := fmt.Sprintf("%d ms", interval.Milliseconds())
	switch {
	case !d.ok:
		dc.FaultStart = fmt.Sprintf("when %s stopped answering as primary (too little load before it to know the writes' steady level)", primary)
		return
	case n == 0:
		dc.FaultStart = fmt.Sprintf("when %s stopped answering as primary (its writes had not fallen below %.0f%% of their steady %.0f per %s before it)",
			primary, degradedFraction*100, steady, per)
		return
	}
	shift := seen.Sub(from)
	dc.FaultStart = fmt.Sprintf("when writes degraded, %.2f s before %s stopped answering as primary: from then on every %s had fewer than %.0f%% of the steady %.0f acknowledged writes",
		shift.Seconds(), primary, per, degradedFraction*100, steady)
	within := d.within()
	if d.dips == 0 {
		dc.FaultStart += fmt.Sprintf("; to within %d ms (one interval)", within.Milliseconds())
	} else {
		dc.FaultStart += fmt.Sprintf("; to within %d ms: the steady load itself fell that low in %d of its %d intervals, for up to %d ms at a time", within.Milliseconds(), d.low, d.of, (time.Duration(d.dips) * interval).Milliseconds())
	}
	w := within.Seconds()
	dc.FaultWithinS = &w
	t.faultAt, dc.FaultAt = from, from
	for i := range t.events {
		if t.events[i].Event == result.EventFault && t.events[i].At.Equal(seen) {
			t.events[i].At, t.events[i].Detail = from, "writes degraded"
		}
	}
	t.events = append(t.events, result.DrillEvent{At: seen, Event: result.EventStoppedAnswering, Detail: primary})
	if dc.FailoverSeconds != nil {
		s := *dc.FailoverSeconds + shift.Seconds()
		dc.FailoverSeconds = &s
	}
}
