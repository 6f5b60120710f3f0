package diskio

import (
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in nanoseconds from 1 ns to a minute with 3 significant digits.
const (
	histLowest  = 1
	histHighest = int64(time.Minute)
	histDigits  = 3
)

func newHist() *hdr.Histogram { return hdr.New(histLowest, histHighest, histDigits) }

// clock gives nanoseconds since the step's epoch on the monotonic clock.
type clock struct{ epoch time.Time }

func (c clock) now() int64 { return int64(time.Since(c.epoch)) }

// window is the measured part of a step: IOs submitted at or after start and completed
// by end count; warm-up before start and the drain after end do not. The step sets both
// edges at the instants it reads the kernel's counters, so the two views cover one window.
//
// A step bound by a count of IOs (Workload.IOs) also counts the IOs measured so far across
// all workers; reached is closed when that count reaches target, for the step to end the
// window then.
type window struct {
	start   atomic.Int64
	end     atomic.Int64
	target  int64
	counted atomic.Int64
	reached chan struct{}
}

// countOne notes one IO measured in the window; the one that makes the target closes reached.
func (w *window) countOne() {
	if w.target > 0 && w.counted.Add(1) == w.target {
		close(w.reached)
	}
}

// recorder is one worker's tally. Only its worker writes to it; the step merges them
// after the workers have stopped.
type recorder struct {
	thread int
	win    *window
	hist   [2]*hdr.Histogram // read, write
	ios    [2]int64
	bytes  [2]int64
	// perSec[i] counts IOs completed in second i of the window.
	perSec []int64
	// all counts every IO, warm-up and drain included.
	all      int64
	late     int64
	bad      []int64
	badCount int64
	err      error
}

func newRecorder(thread int, win *window, seconds int) *recorder {
	return &recorder{thread: thread, win: win, hist: [2]*hdr.Histogram{newHist(), newHist()},
		perSec: make([]int64, seconds+1)}
}

func (r *recorder) record(write bool, size int64, submit, done int64) {
	r.all++
	start := r.win.start.Load()
	if submit < start || done > r.win.end.Load() {
		return
	}
	op := 0
	if write {
		op = 1
	}
	lat := max(done-submit, 1)
	if lat > histHighest {
		lat = histHighest
	}
	r.hist[op].RecordValue(lat)
	r.ios[op]++
	r.bytes[op] += size
	if s := int((done - start) / int64(time.Second)); s >= 0 && s < len(r.perSec) {
		r.perSec[s]++
	}
	r.win.countOne()
}

func (r *recorder) noteBad(offs []int64) {
	r.badCount += int64(len(offs))
	for _, o := range offs {
		if len(r.bad) < MaxBadReported {
			r.bad = append(r.bad, o)
		}
	}
}
