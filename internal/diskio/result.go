package diskio

import (
	"fmt"
	"math"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/agbench/agbench/internal/result"
)

// Percentiles reported for every operation, up to six nines as DiskSpd's -L table.
var Percentiles = []float64{0, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 99.999, 99.9999, 100}

// Pct is one latency percentile in microseconds.
type Pct struct {
	P  float64 `json:"p"`
	Us float64 `json:"us"`
}

// OpStats are the figures of one operation (read, write or both) over the window.
type OpStats struct {
	IOs       int64   `json:"ios"`
	Bytes     int64   `json:"bytes"`
	IOPS      float64 `json:"iops"`
	MBps      float64 `json:"mbps"`
	MeanUs    float64 `json:"mean_us"`
	StddevUs  float64 `json:"stddev_us"`
	Latencies []Pct   `json:"percentiles_us,omitempty"`
	// hist is the HDR histogram in nanoseconds; the result file keeps it in microseconds.
	hist *hdr.Histogram
}

// At returns the latency at percentile p in microseconds (NaN when not reported).
func (o *OpStats) At(p float64) float64 {
	for _, x := range o.Latencies {
		if x.P == p {
			return x.Us
		}
	}
	return math.NaN()
}

// ThreadStats is one thread's line.
type ThreadStats struct {
	Thread int     `json:"thread"`
	IOs    int64   `json:"ios"`
	Bytes  int64   `json:"bytes"`
	IOPS   float64 `json:"iops"`
	MBps   float64 `json:"mbps"`
	Reads  int64   `json:"reads"`
	Writes int64   `json:"writes"`
	MeanUs float64 `json:"mean_us"`
}

// LittleCheck compares IOPS x mean latency with the IOs kept in flight (Little's law:
// L = lambda x W). internal/analyze computes and judges it, once for the terminal and the
// result alike; the run's experiment copies its figures here for the tables.
type LittleCheck struct {
	// Known is set once the analysis has filled the check; without it nothing is shown.
	Known       bool
	Outstanding float64
	Measured    float64
	Deviation   float64
	OK          bool
	// Applies is false for fixed-rate runs, where the queue is not kept full.
	Applies bool
	// NotJudged says why the analysis could not compute the check (Known is then false).
	NotJudged string
}

// StepResult is everything one step measured.
type StepResult struct {
	Workload Workload  `json:"workload"`
	Engine   string    `json:"engine"`
	Start    time.Time `json:"start"`
	Seconds  float64   `json:"seconds"`
	Complete bool      `json:"complete"`
	// CutShort is set when the duration ended a window bound by a count of IOs (Workload.IOs)
	// before that many completed.
	CutShort bool    `json:"cut_short,omitempty"`
	Read     OpStats `json:"read"`
	Write    OpStats `json:"write"`
	Total    OpStats `json:"total"`
	// IOPSStddev is the standard deviation of IOPS over whole 1 s intervals.
	IOPSStddev float64       `json:"iops_stddev"`
	PerSecond  []int64       `json:"iops_per_second"`
	Threads    []ThreadStats `json:"threads"`
	CPU        CPUView       `json:"cpu"`
	Device     *DeviceView   `json:"device,omitempty"`
	Pressure   *PressureView `json:"io_pressure,omitempty"`
	// Little is the analysis's Little's-law check of the step (not stored with the step:
	// the result's analysis holds it).
	Little LittleCheck `json:"-"`
	// AllIOs counts every IO issued, warm-up and drain included.
	AllIOs int64 `json:"all_ios"`
	// Late counts IOs of a fixed-rate run that started more than one period late.
	Late      int64    `json:"late,omitempty"`
	BadBlocks []int64  `json:"bad_blocks,omitempty"`
	BadCount  int64    `json:"bad_count,omitempty"`
	Warnings  []string `json:"warnings,omitempty"`
	// series and osCounters are internal/sample's per-second OS series over the window and
	// their means; they go to the result step's Series and Counters.
	series     map[string]result.TimeSeries
	osCounters map[string]float64
}

func opStats(h *hdr.Histogram, ios, bytes int64, secs float64) OpStats {
	o := OpStats{IOs: ios, Bytes: bytes, hist: h}
	if secs > 0 {
		o.IOPS = float64(ios) / secs
		o.MBps = float64(bytes) / 1e6 / secs
	}
	if h.TotalCount() == 0 {
		return o
	}
	o.MeanUs = h.Mean() / 1e3
	o.StddevUs = h.StdDev() / 1e3
	vals := h.ValueAtPercentilesSlice(Percentiles)
	for i, p := range Percentiles {
		v := vals[i]
		switch p {
		case 0:
			v = h.Min()
		case 100:
			v = h.Max()
		}
		o.Latencies = append(o.Latencies, Pct{P: p, Us: float64(v) / 1e3})
	}
	return o
}

func buildResult(w Workload, engine string, recs []*recorder, measured time.Duration, complete bool) *StepResult {
	secs := measured.Seconds()
	r := &StepResult{Workload: w, Engine: engine, Seconds: secs, Complete: complete}
	hr, hw, ht := newHist(), newHist(), newHist()
	var ios, bytes [2]int64
	var perSec []int64
	threads := make([]ThreadStats, w.Threads)
	thist := make([]*hdr.Histogram, w.Threads)
	for _, rc := range recs {
		hr.Merge(rc.hist[0])
		hw.Merge(rc.hist[1])
		for op := 0; op < 2; op++ {
			ios[op] += rc.ios[op]
			bytes[op] += rc.bytes[op]
		}
		if perSec == nil {
			perSec = make([]int64, len(rc.perSec))
		}
		for i, v := range rc.perSec {
			perSec[i] += v
		}
		r.AllIOs += rc.all
		r.Late += rc.late
		r.BadCount += rc.badCount
		for _, b := range rc.bad {
			if len(r.BadBlocks) < MaxBadReported {
				r.BadBlocks = append(r.BadBlocks, b)
			}
		}
		t := &threads[rc.thread]
		t.Thread = rc.thread
		t.Reads += rc.ios[0]
		t.Writes += rc.ios[1]
		t.IOs += rc.ios[0] + rc.ios[1]
		t.Bytes += rc.bytes[0] + rc.bytes[1]
		if thist[rc.thread] == nil {
			thist[rc.thread] = newHist()
		}
		thist[rc.thread].Merge(rc.hist[0])
		thist[rc.thread].Merge(rc.hist[1])
	}
	ht.Merge(hr)
	ht.Merge(hw)
	r.Read = opStats(hr, ios[0], bytes[0], secs)
	r.Write = opStats(hw, ios[1], bytes[1], secs)
	r.Total = opStats(ht, ios[0]+ios[1], bytes[0]+bytes[1], secs)
	for i := range threads {
		if secs > 0 {
			threads[i].IOPS = float64(threads[i].IOs) / secs
			threads[i].MBps = float64(threads[i].Bytes) / 1e6 / secs
		}
		if thist[i] != nil && thist[i].TotalCount() > 0 {
			threads[i].MeanUs = thist[i].Mean() / 1e3
		}
	}
	r.Threads = threads
	// Only whole seconds count for the spread of IOPS.
	whole := int(secs + 0.05) // a window of 2.000 s may end a hair early
	if whole > len(perSec) {
		whole = len(perSec)
	}
	r.PerSecond = perSec[:whole]
	r.IOPSStddev = stddev(r.PerSecond)
	return r
}

func stddev(v []int64) float64 {
	if len(v) < 2 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += float64(x)
	}
	m := s / float64(len(v))
	var q float64
	for _, x := range v {
		q += (float64(x) - m) * (float64(x) - m)
	}
	return math.Sqrt(q / float64(len(v)-1))
}

// Validity thresholds.
const (
	// TesterSaturatedPct: a tester using this much of one CPU per thread may be the bottleneck.
	TesterSaturatedPct = 90
)

// Steal time is judged by internal/analyze alone (steal), which knows the device's IO
// beside it; the tester records it (CPUView) but gives no warning of its own. Results
// written before that may still hold one starting with warnSteal.
//
// Warnings that internal/analyze also gives (as steal, foreign-io, page-cache and
// rate-not-kept) start with these words; a report of an analysed run leaves them to the
// analysis, so that the terminal and the result say one thing. The window's length and
// Little's law are judged by the analysis alone (window-short, littles-law).
const (
	warnSteal    = "steal time"
	warnOtherIO  = "other IO shares the device:"
	warnBuffered = "buffered IO:"
	warnCache    = "caches not bypassed:"
	warnRate     = "rate not kept:"
)

// SharedWarning reports whether w is one internal/analyze also gives.
func SharedWarning(w string) bool {
	for _, p := range []string{warnSteal, warnOtherIO, warnBuffered, warnCache, warnRate} {
		if strings.HasPrefix(w, p) {
			return true
		}
	}
	return false
}

// check fills the validity warnings.
func (r *StepResult) check() {
	var warn []string
	if !r.Complete {
		warn = append(warn, "interrupted: the window was cut short; figures cover what was measured")
	}
	if r.CutShort {
		warn = append(warn, fmt.Sprintf("cut short: --duration %s ended the window after %d of the --ios %d IOs; figures cover what was measured",
			r.Workload.Duration, r.Total.IOs, r.Workload.IOs))
	}
	if !r.Workload.Direct {
		warn = append(warn, warnBuffered+" this measures the page cache, not the device")
	}
	if r.CPU.TesterPct > TesterSaturatedPct*float64(r.Workload.Threads) && r.Workload.Threads > 0 {
		warn = append(warn, fmt.Sprintf("tester busy: %.0f%% of a CPU for %d thread(s); the load generator may be the bottleneck", r.CPU.TesterPct, r.Workload.Threads))
	}
	if r.Device != nil && r.Workload.Direct {
		tot := float64(r.Total.Bytes)
		dev := r.Device.Bytes
		if tot > 0 && dev < tot*0.5 {
			warn = append(warn, fmt.Sprintf("%s device %s moved %.0f%% of the bytes the tester did (page cache or a cache layer)", warnCache, r.Device.Name, dev/tot*100))
		}
		devIOs := (r.Device.ReadIOPS + r.Device.WriteIOPS) * r.Seconds
		if n := float64(r.Total.IOs); n > 0 && devIOs > 1.8*n && dev < tot*1.2 {
			warn = append(warn, fmt.Sprintf("device %s completed %.1fx as many IOs as were issued for the same bytes: IOs are being split (alignment, max_sectors_kb)", r.Device.Name, devIOs/n))
		}
		if tot > 0 && dev > tot*1.5 {
			warn = append(warn, fmt.Sprintf("%s device %s moved %.1fx the bytes the tester did", warnOtherIO, r.Device.Name, dev/tot))
		}
	}
	if r.Late > 0 {
		warn = append(warn, fmt.Sprintf("%s %d IOs started more than one period late (latency is counted from when they were due)", warnRate, r.Late))
	}
	if r.BadCount > 0 {
		warn = append(warn, fmt.Sprintf("verify: %d block(s) read back differ from what was written", r.BadCount))
	}
	r.Warnings = warn
}
