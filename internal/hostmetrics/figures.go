package hostmetrics

import (
	"fmt"
	"sort"

	"github.com/agbench/agbench/internal/result"
)

// Figures are a host's figures over the interval between two Readings, by their names in
// a result ("host.<node>.*"), with the unit of each; Absent says, of each figure that could
// not be made, why.
type Figures struct {
	Seconds float64
	Values  map[string]float64
	Units   map[string]string
	Absent  map[string]string
}

func (f *Figures) set(name, unit string, v float64) {
	f.Values[name] = v
	f.Units[name] = unit
}

// missing records why a figure is absent, keeping the first reason given.
func (f *Figures) missing(name, why string) {
	if _, ok := f.Absent[name]; !ok {
		f.Absent[name] = why
	}
}

// notExported is the reason of a figure whose series the exporter did not report.
func notExported(metric string) string {
	return "the exporter did not report " + metric + " (its collector is off, or the host has no such figure)"
}

// Between turns the Readings prev and cur of node's host into the per-second figures of
// the interval between them: CPU shares by mode, the run queue, memory and page cache,
// each device's IOPS, MB/s, latency, queue and utilisation, network bytes and errors, and
// the exporter's clock offset at cur. Counters that went backwards (a restarted exporter
// or host) count nothing, as the local samplers' do.
func Between(node string, prev, cur Reading) Figures {
	f := Figures{Seconds: cur.At.Sub(prev.At).Seconds(), Values: map[string]float64{}, Units: map[string]string{}, Absent: map[string]string{}}
	h := func(fig string) string { return result.HostName(node, fig) }
	if cur.CPUs > 0 {
		f.set(h(result.HostCPUs), "cpus", float64(cur.CPUs))
	}
	if cur.ClockOffset != nil {
		f.set(h(result.HostScrapeOffsetS), "s", *cur.ClockOffset)
	} else {
		f.missing(h(result.HostScrapeOffsetS), notExported(metricTime))
	}
	f.gauges(node, cur)
	if f.Seconds <= 0 {
		for _, n := range rateNames(node, cur) {
			f.missing(n, "the two readings are of the same moment: no interval to make a rate of")
		}
		return f
	}
	f.cpu(node, prev, cur)
	f.cpuPressure(node, prev, cur)
	f.disks(node, prev, cur)
	f.net(node, prev, cur)
	return f
}

// rateNames are the names of the figures Between makes of an interval.
func rateNames(node string, cur Reading) []string {
	var out []string
	for _, fig := range []string{result.HostCPUBusy, result.HostCPUIOWait, result.HostCPUSteal, result.HostCPUPressure, result.HostNetRxBPS, result.HostNetTxBPS, result.HostNetErrors} {
		out = append(out, result.HostName(node, fig))
	}
	for _, dev := range sortedDevices(cur) {
		for _, fig := range diskFigures {
			out = append(out, result.HostDiskName(node, dev, fig))
		}
	}
	return out
}

var diskFigures = []string{result.DiskIOPS, result.DiskReadMBps, result.DiskWriteMBps, result.DiskAwaitMs, result.DiskQueue, result.DiskUtil}

func sortedDevices(r Reading) []string {
	out := make([]string, 0, len(r.Disks))
	for d := range r.Disks {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

func (f *Figures) gauges(node string, cur Reading) {
	for _, g := range []struct{ metric, fig, unit string }{
		{metricProcsRunning, result.HostRunQueue, "tasks"},
		{metricMemTotal, result.HostMemTotal, "bytes"},
		{metricMemAvailable, result.HostMemAvailable, "bytes"},
		{metricMemCached, result.HostMemPageCache, "bytes"},
		{metricBootTime, result.HostBootTime, "s"},
	} {
		if v, ok := cur.Gauges[g.metric]; ok {
			f.set(result.HostName(node, g.fig), g.unit, v)
		} else {
			f.missing(result.HostName(node, g.fig), notExported(g.metric))
		}
	}
}

// cpu makes the shares of the host's CPU time by mode: busy is all but idle, iowait and
// steal (user, nice, system, irq, softirq), as this machine's os.cpu.busy.
func (f *Figures) cpu(node string, prev, cur Reading) {
	h := func(fig string) string { return result.HostName(node, fig) }
	var total float64
	for mode, v := range cur.CPUMode {
		total += delta(prev.CPUMode[mode], v)
	}
	if total <= 0 {
		for _, fig := range []string{result.HostCPUBusy, result.HostCPUIOWait, result.HostCPUSteal} {
			f.missing(h(fig), "node_cpu_seconds_total did not move between the readings (the exporter gave the same counters twice)")
		}
		return
	}
	share := func(mode string) float64 { return delta(prev.CPUMode[mode], cur.CPUMode[mode]) / total }
	f.set(h(result.HostCPUBusy), "share", max(0, 1-share("idle")-share("iowait")-share("steal")))
	f.set(h(result.HostCPUIOWait), "share", share("iowait"))
	f.set(h(result.HostCPUSteal), "share", share("steal"))
}

// cpuPressure makes the share of the interval in which some runnable task of the host
// waited for a CPU (PSI), as this machine's psi.cpu.some: capped at 1, as the counter and
// the readings' times are not taken at one instant.
func (f *Figures) cpuPressure(node string, prev, cur Reading) {
	name := result.HostName(node, result.HostCPUPressure)
	if prev.CPUWaiting == nil || cur.CPUWaiting == nil {
		f.missing(name, notExported(metricCPUWaiting)+": no PSI on its kernel, or the pressure collector is off")
		return
	}
	f.set(name, "share", min(delta(*prev.CPUWaiting, *cur.CPUWaiting)/f.Seconds, 1))
}

// disks makes each device's figures, as this machine's disk.<device>.* are made from
// /proc/diskstats: a device in only one of the readings has none.
func (f *Figures) disks(node string, prev, cur Reading) {
	for _, dev := range sortedDevices(cur) {
		c, p := cur.Disks[dev], prev.Disks[dev]
		name := func(fig string) string { return result.HostDiskName(node, dev, fig) }
		if p == nil {
			for _, fig := range diskFigures {
				f.missing(name(fig), fmt.Sprintf("device %s was not in the previous reading", dev))
			}
			continue
		}
		d := func(metric string) (float64, bool) {
			cv, ok1 := c[metric]
			pv, ok2 := p[metric]
			return delta(pv, cv), ok1 && ok2
		}
		per := func(fig, unit string, scale float64, metrics ...string) {
			var sum float64
			for _, m := range metrics {
				v, ok := d(m)
				if !ok {
					f.missing(name(fig), notExported(m))
					return
				}
				sum += v
			}
			f.set(name(fig), unit, sum*scale/f.Seconds)
		}
		per(result.DiskIOPS, "1/s", 1, metricDiskReads, metricDiskWrites)
		per(result.DiskReadMBps, "MB/s", 1e-6, metricDiskReadBytes)
		per(result.DiskWriteMBps, "MB/s", 1e-6, metricDiskWriteBytes)
		per(result.DiskQueue, "requests", 1, metricDiskWeightedIOT)
		if v, ok := d(metricDiskIOTime); ok {
			f.set(name(result.DiskUtil), "share", min(v/f.Seconds, 1))
		} else {
			f.missing(name(result.DiskUtil), notExported(metricDiskIOTime))
		}
		f.await(name(result.DiskAwaitMs), d)
	}
}

// await is the mean time of a completed read or write in ms, queue included; 0 when none
// completed, as this machine's disk.<device>.await_ms.
func (f *Figures) await(name string, d func(string) (float64, bool)) {
	ios, ok1 := d(metricDiskReads)
	w, ok2 := d(metricDiskWrites)
	rt, ok3 := d(metricDiskReadTime)
	wt, ok4 := d(metricDiskWriteTime)
	switch {
	case !ok1 || !ok2:
		f.missing(name, notExported(metricDiskReads+" or "+metricDiskWrites))
	case !ok3 || !ok4:
		f.missing(name, notExported(metricDiskReadTime+" or "+metricDiskWriteTime))
	case ios+w == 0:
		f.set(name, "ms", 0)
	default:
		f.set(name, "ms", (rt+wt)*1000/(ios+w))
	}
}

// net makes the host's network bytes and errors (receive and transmit errors and drops)
// per second, over every interface but loopback that both readings have: one that came or
// went between them moved no counted bytes in the interval.
func (f *Figures) net(node string, prev, cur Reading) {
	per := func(fig, unit string, metrics ...string) {
		var sum float64
		for _, m := range metrics {
			cv, ok1 := cur.Net[m]
			pv, ok2 := prev.Net[m]
			if !ok1 || !ok2 {
				f.missing(result.HostName(node, fig), notExported(m))
				return
			}
			for dev, c := range cv {
				if p, ok := pv[dev]; ok {
					sum += delta(p, c)
				}
			}
		}
		f.set(result.HostName(node, fig), unit, sum/f.Seconds)
	}
	per(result.HostNetRxBPS, "B/s", metricNetRxBytes)
	per(result.HostNetTxBPS, "B/s", metricNetTxBytes)
	per(result.HostNetErrors, "1/s", metricNetRxErrs, metricNetTxErrs, metricNetRxDrop, metricNetTxDrop)
}

// delta is how much a counter grew; one that went backwards grew by nothing.
func delta(prev, cur float64) float64 {
	if cur < prev {
		return 0
	}
	return cur - prev
}
