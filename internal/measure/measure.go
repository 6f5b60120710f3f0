// Package measure owns what a run measures while it runs: HDR latency histograms per
// operation type, successes and errors apart, recorded by each virtual user into its own
// handle and merged on a tick that carries both the interval and the running total; rows,
// bytes and retries; and the throughput and error-rate series built from the ticks.
//
// It imports only internal/result (to hand over merged figures); it must not import the
// runner, workloads, samplers or the report.
//
// Imports from agbench: only internal/result.
package measure

import (
	"sort"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/agbench/agbench/internal/result"
)

// Range of recorded latencies, in microseconds (result.LatencyUnit), and the histograms'
// precision. Longer latencies are recorded as MaxLatencyMicros (and counted as clipped).
const (
	MinLatencyMicros  = 1
	MaxLatencyMicros  = int64(time.Hour / time.Microsecond)
	SignificantDigits = 3
)

// AllOps is the key of the throughput series of all operation types together.
const AllOps = "*"

// NewHistogram returns an empty latency histogram of the package's range and precision.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(MinLatencyMicros, MaxLatencyMicros, SignificantDigits)
}

// OpStats is what was recorded for one operation type.
type OpStats struct {
	Success *hdrhistogram.Histogram
	Error   *hdrhistogram.Histogram
	Rows    int64
	Bytes   int64
	Retries int64
	// Clipped counts latencies above the histograms' range, recorded as the maximum.
	Clipped int64
}

func newOpStats() *OpStats {
	return &OpStats{Success: NewHistogram(), Error: NewHistogram()}
}

// Count is the number of successful operations; Errors the failed ones.
func (s *OpStats) Count() int64  { return s.Success.TotalCount() }
func (s *OpStats) Errors() int64 { return s.Error.TotalCount() }

func (s *OpStats) merge(o *OpStats) {
	s.Success.Merge(o.Success)
	s.Error.Merge(o.Error)
	s.Rows += o.Rows
	s.Bytes += o.Bytes
	s.Retries += o.Retries
	s.Clipped += o.Clipped
}

// Sample is one finished operation, as a virtual user reports it.
type Sample struct {
	Op      string
	Latency time.Duration
	Err     bool
	Rows    int64
	Bytes   int64
	Retries int64
}

// Handle is one virtual user's recorder. Only its owner records into it; the registry's
// tick takes its contents under a lock that the owner almost never waits for.
type Handle struct {
	mu     sync.Mutex
	ops    map[string]*OpStats
	frozen bool
}

// Record adds one finished operation and reports whether it did: after the registry is
// frozen it records nothing.
func (h *Handle) Record(s Sample) bool {
	us := int64(s.Latency / time.Microsecond)
	clipped := int64(0)
	if us < MinLatencyMicros {
		us = MinLatencyMicros
	}
	if us > MaxLatencyMicros {
		us, clipped = MaxLatencyMicros, 1
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.frozen {
		return false
	}
	o := h.ops[s.Op]
	if o == nil {
		o = newOpStats()
		h.ops[s.Op] = o
	}
	if s.Err {
		o.Error.RecordValue(us)
	} else {
		o.Success.RecordValue(us)
	}
	o.Rows += s.Rows
	o.Bytes += s.Bytes
	o.Retries += s.Retries
	o.Clipped += clipped
	return true
}

// take returns what was recorded since the last take and starts afresh.
func (h *Handle) take() map[string]*OpStats {
	h.mu.Lock()
	defer h.mu.Unlock()
	got := h.ops
	h.ops = map[string]*OpStats{}
	return got
}

// Registry merges the handles of a step's virtual users.
type Registry struct {
	mu      sync.Mutex
	handles []*Handle
	total   map[string]*OpStats
	start   time.Time
	last    time.Time
	// lastIv is the interval of the last point added.
	lastIv time.Duration
	frozen bool
	// series is operations per second (successes and errors), errSeries errors per second.
	series, errSeries map[string]*result.TimeSeries
}

// NewRegistry returns a registry whose window starts at start.
func NewRegistry(start time.Time) *Registry {
	r := &Registry{}
	r.Reset(start)
	return r
}

// NewHandle returns a recorder for one virtual user.
func (r *Registry) NewHandle() *Handle {
	h := &Handle{ops: map[string]*OpStats{}}
	r.mu.Lock()
	defer r.mu.Unlock()
	h.frozen = r.frozen
	r.handles = append(r.handles, h)
	return h
}

// Reset forgets everything recorded so far and starts the window at now: the runner calls
// it when ramp-up ends.
func (r *Registry) Reset(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, h := range r.handles {
		h.take()
	}
	r.total = map[string]*OpStats{}
	r.series = map[string]*result.TimeSeries{}
	r.errSeries = map[string]*result.TimeSeries{}
	r.start, r.last = now, now
	r.lastIv = 0
}

// Tick is the merge of all handles at one moment.
type Tick struct {
	Now time.Time
	// Elapsed is the time since the window started; Interval the time since the last tick.
	Elapsed  time.Duration
	Interval time.Duration
	// IntervalOps holds what finished since the last tick; Total since the window started.
	IntervalOps map[string]*OpStats
	Total       map[string]*OpStats
}

// Tick merges what every handle recorded since the last tick into the running total, adds
// a point per operation type to the throughput series, and returns both.
func (r *Registry) Tick(now time.Time) Tick { return r.tick(now, false) }

// tick is Tick; final marks the window's last tick, whose interval is whatever was left:
// shorter than half the interval before it, it is folded into that point rather than
// added as a point of its own (a few milliseconds' rate would be mostly noise, and often 0
// since operations still running at the close are not counted).
func (r *Registry) tick(now time.Time, final bool) Tick {
	r.mu.Lock()
	defer r.mu.Unlock()
	iv := map[string]*OpStats{}
	for _, h := range r.handles {
		for name, o := range h.take() {
			acc := iv[name]
			if acc == nil {
				acc = newOpStats()
				iv[name] = acc
			}
			acc.merge(o)
		}
	}
	for name, o := range iv {
		acc := r.total[name]
		if acc == nil {
			acc = newOpStats()
			r.total[name] = acc
		}
		acc.merge(o)
	}
	interval := now.Sub(r.last)
	switch {
	case interval <= 0:
	case final && r.lastIv > 0 && interval < r.lastIv/2 && r.series[AllOps] != nil && len(r.series[AllOps].V) > 0:
		r.foldPoints(now, interval, iv)
	default:
		r.addPoints(now, interval, iv)
		r.lastIv = interval
	}
	r.last = now
	return Tick{Now: now, Elapsed: now.Sub(r.start), Interval: interval, IntervalOps: iv, Total: r.total}
}

// addPoints records operations per second of the interval ending at now, per type and for
// all types, for every type seen so far (a type that did nothing this interval gets a 0),
// and failed operations per second likewise.
func (r *Registry) addPoints(now time.Time, interval time.Duration, iv map[string]*OpStats) {
	for _, k := range r.kinds() {
		var all int64
		for name := range r.total {
			var n int64
			if o := iv[name]; o != nil {
				n = k.count(o)
			}
			all += n
			r.point(k.series, name, now, float64(n)/interval.Seconds())
		}
		r.point(k.series, AllOps, now, float64(all)/interval.Seconds())
	}
}

// seriesKind is one family of rate series: what it counts of an interval's operations.
type seriesKind struct {
	series map[string]*result.TimeSeries
	count  func(*OpStats) int64
}

func (r *Registry) kinds() []seriesKind {
	return []seriesKind{
		{r.series, func(o *OpStats) int64 { return o.Count() + o.Errors() }},
		{r.errSeries, (*OpStats).Errors},
	}
}

// foldPoints merges the interval ending at now into each series' last point: that point's
// rate becomes the rate over both intervals, and it moves to now.
func (r *Registry) foldPoints(now time.Time, interval time.Duration, iv map[string]*OpStats) {
	for _, k := range r.kinds() {
		var all int64
		fold := func(name string, n int64) {
			s := k.series[name]
			if s == nil || len(s.V) == 0 {
				return
			}
			i := len(s.V) - 1
			s.V[i] = (s.V[i]*r.lastIv.Seconds() + float64(n)) / (r.lastIv + interval).Seconds()
			s.T[i] = now.Sub(s.Start).Seconds()
		}
		for name := range r.total {
			var n int64
			if o := iv[name]; o != nil {
				n = k.count(o)
			}
			all += n
			if k.series[name] == nil {
				r.point(k.series, name, now, float64(n)/interval.Seconds())
				continue
			}
			fold(name, n)
		}
		fold(AllOps, all)
	}
	r.lastIv += interval
}

func (r *Registry) point(m map[string]*result.TimeSeries, name string, now time.Time, v float64) {
	result.AddPoint(m, name, "ops/s", r.start, now, v)
}

// Freeze takes a last tick at now and makes every handle drop what it is given from then
// on: an operation still running when the window closes (or the run is cancelled) is not
// counted.
func (r *Registry) Freeze(now time.Time) Tick {
	r.mu.Lock()
	r.frozen = true
	for _, h := range r.handles {
		h.mu.Lock()
		h.frozen = true
		h.mu.Unlock()
	}
	r.mu.Unlock()
	// The handles' contents up to now are still there to take.
	return r.tick(now, true)
}

// Ops returns the running total per operation type, encoded for a result file.
func (r *Registry) Ops() (map[string]*result.Op, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]*result.Op{}
	for name, o := range r.total {
		op, err := ToResult(o)
		if err != nil {
			return nil, err
		}
		out[name] = op
	}
	return out, nil
}

// ToResult encodes one operation type's figures for a result file.
func ToResult(o *OpStats) (*result.Op, error) {
	lat, err := result.NewHist(o.Success)
	if err != nil {
		return nil, err
	}
	op := &result.Op{Count: o.Count(), Errors: o.Errors(), Rows: o.Rows, Bytes: o.Bytes, Retries: o.Retries, Latency: lat}
	if o.Errors() > 0 {
		el, err := result.NewHist(o.Error)
		if err != nil {
			return nil, err
		}
		op.ErrorLatency = &el
	}
	return op, nil
}

// Throughput returns the throughput series per operation type and for all (AllOps).
func (r *Registry) Throughput() map[string]result.TimeSeries {
	r.mu.Lock()
	defer r.mu.Unlock()
	return copySeries(r.series)
}

func copySeries(m map[string]*result.TimeSeries) map[string]result.TimeSeries {
	out := make(map[string]result.TimeSeries, len(m))
	for name, s := range m {
		out[name] = *s
	}
	return out
}

// ErrorThroughput returns the failed operations' series per operation type and for all
// (AllOps), at the same points as Throughput's.
func (r *Registry) ErrorThroughput() map[string]result.TimeSeries {
	r.mu.Lock()
	defer r.mu.Unlock()
	return copySeries(r.errSeries)
}

// OpNames returns the names of the totals' operation types, sorted.
func OpNames(m map[string]*OpStats) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
