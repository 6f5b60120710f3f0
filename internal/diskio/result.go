package diskio

import (
	"fmt"
	"math"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/agbench/agbench/internal/result/diskrun"
)

func opStats(h *hdr.Histogram, ios, bytes int64, secs float64) OpStats {
	o := OpStats{IOs: ios, Bytes: bytes, Hist: h}
	if secs > 0 {
		o.IOPS = float64(ios) / secs
		o.MBps = float64(bytes) / 1e6 / secs
	}
	if h.TotalCount() == 0 {
		return o
	}
	o.MeanUs = h.Mean() / 1e3
	o.StddevUs = h.StdDev() / 1e3
	vals := h.ValueAtPercentilesSlice(diskrun.Percentiles)
	for i, p := range diskrun.Percentiles {
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

// checkStep fills the step's validity warnings.
func checkStep(r *StepResult) {
	var warn []string
	if !r.Complete {
		warn = append(warn, "interrupted: the window was cut short; figures cover what was measured")
	}
	if r.CutShort {
		warn = append(warn, fmt.Sprintf("cut short: --duration %s ended the window after %d of the --ios %d IOs; figures cover what was measured",
			r.Workload.Duration, r.Total.IOs, r.Workload.IOs))
	}
	if !r.Workload.Direct {
		warn = append(warn, diskrun.WarnBuffered+" this measures the page cache, not the device")
	}
	if r.CPU.TesterPct > TesterSaturatedPct*float64(r.Workload.Threads) && r.Workload.Threads > 0 {
		warn = append(warn, fmt.Sprintf("tester busy: %.0f%% of a CPU for %d thread(s); the load generator may be the bottleneck", r.CPU.TesterPct, r.Workload.Threads))
	}
	if r.Device != nil && r.Workload.Direct {
		tot := float64(r.Total.Bytes)
		dev := r.Device.Bytes
		if tot > 0 && dev < tot*0.5 {
			warn = append(warn, fmt.Sprintf("%s device %s moved %.0f%% of the bytes the tester did (page cache or a cache layer)", diskrun.WarnCache, r.Device.Name, dev/tot*100))
		}
		devIOs := (r.Device.ReadIOPS + r.Device.WriteIOPS) * r.Seconds
		if n := float64(r.Total.IOs); n > 0 && devIOs > 1.8*n && dev < tot*1.2 {
			warn = append(warn, fmt.Sprintf("device %s completed %.1fx as many IOs as were issued for the same bytes: IOs are being split (alignment, max_sectors_kb)", r.Device.Name, devIOs/n))
		}
		if tot > 0 && dev > tot*1.5 {
			warn = append(warn, fmt.Sprintf("%s device %s moved %.1fx the bytes the tester did", diskrun.WarnOtherIO, r.Device.Name, dev/tot))
		}
	}
	if r.Late > 0 {
		warn = append(warn, fmt.Sprintf("%s %d IOs started more than one period late (latency is counted from when they were due)", diskrun.WarnRate, r.Late))
	}
	if r.BadCount > 0 {
		warn = append(warn, fmt.Sprintf("verify: %d block(s) read back differ from what was written", r.BadCount))
	}
	r.Warnings = warn
}
