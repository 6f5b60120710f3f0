package diskrun

import (
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
	// Hist is the tester's HDR histogram in nanoseconds while the run lasts; the result
	// keeps it in microseconds as the step's op (not in this section).
	Hist *hdr.Histogram `json:"-"`
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

// StepResult is everything one step measured: a step's section (Step.Extra["disk"]).
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
	// OSSeries and OSCounters are internal/sample's per-second OS series over the window
	// and their means while the run lasts; the result keeps them as the step's Series and
	// Counters (not in this section).
	OSSeries   map[string]result.TimeSeries `json:"-"`
	OSCounters map[string]float64           `json:"-"`
}

// DeviceView is the block device's own account of a step (iostat -x's columns).
type DeviceView struct {
	Name        string  `json:"name"`
	ReadIOPS    float64 `json:"read_iops"`
	WriteIOPS   float64 `json:"write_iops"`
	ReadMBps    float64 `json:"read_mbps"`
	WriteMBps   float64 `json:"write_mbps"`
	ReadAwaitMs float64 `json:"read_await_ms"`
	WriteAwait  float64 `json:"write_await_ms"`
	AvgQueue    float64 `json:"avg_queue"`
	UtilPct     float64 `json:"util_pct"`
	// Bytes is what the device read and wrote over the window.
	Bytes float64 `json:"bytes"`
}

// PressureView is the share of the window in which some (or all) tasks stalled on IO.
type PressureView struct {
	SomePct float64 `json:"some_pct"`
	FullPct float64 `json:"full_pct"`
}

// CPUView is CPU use over the measured window: the tester's (in % of one CPU and per IO)
// and the machine's (in % of all CPUs).
type CPUView struct {
	TesterUserS     float64 `json:"tester_user_s"`
	TesterSysS      float64 `json:"tester_sys_s"`
	TesterPct       float64 `json:"tester_pct_of_one_cpu"`
	TesterUsPerIO   float64 `json:"tester_us_per_io"`
	MachineUserPct  float64 `json:"machine_user_pct"`
	MachineSysPct   float64 `json:"machine_sys_pct"`
	MachineIOWait   float64 `json:"machine_iowait_pct"`
	MachineStealPct float64 `json:"machine_steal_pct"`
	MachineIdlePct  float64 `json:"machine_idle_pct"`
	Cores           int     `json:"cores"`
}

// Steal time is judged by internal/analyze alone (steal), which knows the device's IO
// beside it; the tester records it (CPUView) but gives no warning of its own. Results
// written before that may still hold one starting with WarnSteal.
//
// Warnings that internal/analyze also gives (as steal, foreign-io, page-cache and
// rate-not-kept) start with these words; a report of an analysed run leaves them to the
// analysis, so that the terminal and the result say one thing. The window's length and
// Little's law are judged by the analysis alone (window-short, littles-law).
const (
	WarnSteal    = "steal time"
	WarnOtherIO  = "other IO shares the device:"
	WarnBuffered = "buffered IO:"
	WarnCache    = "caches not bypassed:"
	WarnRate     = "rate not kept:"
)

// SharedWarning reports whether w is one internal/analyze also gives.
func SharedWarning(w string) bool {
	for _, p := range []string{WarnSteal, WarnOtherIO, WarnBuffered, WarnCache, WarnRate} {
		if strings.HasPrefix(w, p) {
			return true
		}
	}
	return false
}
