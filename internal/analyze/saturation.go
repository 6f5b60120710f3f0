package analyze

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agbench/agbench/internal/result"
)

// Attribution thresholds.
const (
	// DominantWaitShare is the share of sampled sessions a wait class needs to be named.
	DominantWaitShare = 0.30
	// CPUSaturatedShare is the machine CPU busy share at which the CPU counts as pinned.
	CPUSaturatedShare = 0.90
	// LoadGenHeavyShare is the share of the busy CPU, used by the load generator itself,
	// beyond which a pinned CPU is blamed on the generator rather than the database.
	LoadGenHeavyShare = 0.50
	// DeviceSaturatedUtil is the device utilisation at which the device counts as busy.
	DeviceSaturatedUtil = 0.90
	// DeviceQueueGrowth is how many times the device's queue and await must grow from the
	// lowest load for queueing in the block layer to count as the bottleneck.
	DeviceQueueGrowth = 2.0
	// LagGrowthLimit is replay lag gained per second (s/s) that counts as a standby falling behind.
	LagGrowthLimit = 0.05
)

// Resources that can saturate.
const (
	ResLog      = "log"
	ResDataRead = "data reads"
	ResIO       = "other IO"
	ResLocks    = "locks"
	ResLWLocks  = "internal locks (LWLock)"
	ResClient   = "the client or network"
	ResSyncRep  = "the synchronous standby"
	// ResSyncAway is no saturation: commits waited for a synchronous standby that was down
	// or not answering.
	ResSyncAway = "a synchronous standby that was down or not answering"
	ResCPU      = "the CPU"
	ResLoadGen  = "the load generator's CPU"
	ResDevice   = "the storage device"
	ResReplica  = "the replica"
	ResNone     = ""
)

// Saturation says what gave at the knee and beyond, with the figures that show it.
type Saturation struct {
	Resource string  `json:"resource"` // one of the Res constants; empty when nothing stood out
	From     float64 `json:"from"`     // the load from which the evidence was taken
	Sentence string  `json:"sentence"`
}

type waitClass struct {
	res, label, class string
	v                 func(Waits) float64
}

var waitClasses = []waitClass{
	{ResLog, "WAL write/sync waits", "log", func(w Waits) float64 { return w.Log }},
	{ResDataRead, "DataFileRead waits", "data_read", func(w Waits) float64 { return w.DataRead }},
	{ResIO, "other IO waits", "other_io", func(w Waits) float64 { return w.OtherIO }},
	{ResLocks, "lock waits", "lock", func(w Waits) float64 { return w.Lock }},
	{ResLWLocks, "LWLock waits", "lwlock", func(w Waits) float64 { return w.LWLock }},
	{ResClient, "client waits", "client", func(w Waits) float64 { return w.Client }},
	{ResSyncRep, "SyncRep waits", "sync_rep", func(w Waits) float64 { return w.SyncRep }},
}

// topEvent names the most frequent wait event of a class, e.g. " (mostly Lock:tuple)".
func topEvent(ws []result.WaitEvent, class string) string {
	best := result.WaitEvent{}
	for _, w := range ws {
		if w.Class == class && w.Sessions > best.Sessions {
			best = w
		}
	}
	if best.Sessions == 0 {
		return ""
	}
	return fmt.Sprintf(" (mostly %s:%s)", best.Type, best.Event)
}

// WhatSaturated names the resource that gave at the knee and beyond. It averages the
// evidence of every step from the knee (or the saturation point, or the highest load when
// throughput was still rising) up, and compares it with the lowest load's.
func WhatSaturated(k Knee, ev []Evidence, loadName string) Saturation {
	if k.Characteristic == nil || len(ev) == 0 {
		return Saturation{Sentence: "No sampler evidence was recorded, so what saturated is not known."}
	}
	from := k.Peak.Load
	switch {
	case k.Knee != nil:
		from = k.Knee.Load
	case k.Saturation != nil && !k.RisingAtEnd:
		from = k.Saturation.Load
	}
	var hot []Evidence
	for _, e := range ev {
		if e.Load >= from {
			hot = append(hot, e)
		}
	}
	if len(hot) == 0 {
		return Saturation{Sentence: "No sampler evidence was recorded at the knee, so what saturated is not known."}
	}
	h := meanEvidence(hot)
	base, _ := evidenceAt(ev, k.Characteristic.Load)
	where := fmt.Sprintf("At %s and beyond", count(from, loadName))
	if len(hot) == 1 {
		where = fmt.Sprintf("At %s", count(from, loadName))
	}
	at := fmt.Sprintf("at %s", count(k.Characteristic.Load, loadName))
	if len(hot) == 1 && hot[0].Load == base.Load { // the one hot step is the lowest load: nothing to compare it with
		at = ""
	}
	s := attribute(h, base, at, loadName)
	s.From = from
	switch {
	case s.Resource == ResSyncAway: // nothing saturated: what commits waited for was not there
		s.Sentence = where + ", " + s.Sentence + "."
	case k.RisingAtEnd && s.Resource == ResNone:
		s.Sentence = fmt.Sprintf("Throughput was still rising at %s (no knee reached) and no layer measured as saturated: %s.", count(from, loadName), s.Sentence)
	case k.RisingAtEnd:
		s.Sentence = fmt.Sprintf("Throughput was still rising at %s (no knee reached); the busiest layer there was %s: %s.", count(from, loadName), s.Resource, s.Sentence)
	case s.Resource == ResNone:
		s.Sentence = where + ", no layer measured as saturated: " + s.Sentence + "."
	default:
		s.Sentence = where + ", " + s.Resource + " saturated: " + s.Sentence + "."
	}
	switch {
	case s.Resource != ResReplica && h.LagGrowth >= LagGrowthLimit:
		s.Sentence = strings.TrimSuffix(s.Sentence, ".") + fmt.Sprintf("; meanwhile standby %s fell behind (replay lag %.1f s, growing %.2f s/s).", h.Standby, h.ReplayLagSec, h.LagGrowth)
	case s.Resource != ResReplica && h.LagAbsent != "":
		s.Sentence = strings.TrimSuffix(s.Sentence, ".") + "; whether a standby fell behind was not judged: " + h.LagAbsent + "."
	}
	if n := nodeHostsNetErrors(h, base); n != "" {
		s.Sentence = strings.TrimSuffix(s.Sentence, ".") + "; meanwhile " + n + "."
	}
	if n := nodeHostsUnjudged(h.NodeHosts); n != "" && s.Resource != ResNone {
		s.Sentence = strings.TrimSuffix(s.Sentence, ".") + "; " + n + "."
	}
	return s
}

// attribute names what saturated in the hot windows h, each figure beside its value at
// the lowest load (base, at "at 1 VU"); at is "" when the hot windows are the lowest load's
// own, and nothing is compared.
func attribute(h, base Evidence, at, loadName string) Saturation {
	was := func(figs string) string { return atBase(figs, at) }
	total := h.Waits.Total()
	share := func(v float64, w Waits) float64 {
		if t := w.Total(); t > 0 {
			return v / t
		}
		return 0
	}
	// A load generator starved of CPU shows on the server as sessions waiting for the
	// client, so it is ruled out before the waits are read.
	if h.CPUBusy >= CPUSaturatedShare && h.LoadGenShare >= LoadGenHeavyShare*h.CPUBusy {
		return Saturation{Resource: ResLoadGen, Sentence: fmt.Sprintf("machine CPU %s busy, the load generator itself using %.1f cores (%s of the machine%s)",
			pct(h.CPUBusy), h.LoadGenCores, pct(h.LoadGenShare), atBaseAfter(fmt.Sprintf("%.1f cores", base.LoadGenCores), at))}
	}
	// A node's modelled host at its CPU budget is the capacity that gave, whatever the
	// sessions' waits (a throttled backend shows as on CPU or as whatever it held).
	if s, ok := saturatedHost(h.Hosts); ok {
		return s
	}
	// So is a node's own host out of CPU or storage, as its node_exporter saw it.
	if s, ok := saturatedNodeHost(h, base, at); ok {
		return s
	}
	// Named waits next: they say where sessions queue.
	if total > 0 {
		sorted := append([]waitClass(nil), waitClasses...)
		sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].v(h.Waits) > sorted[j].v(h.Waits) })
		top := sorted[0]
		if sh := share(top.v(h.Waits), h.Waits); sh >= DominantWaitShare && top.v(h.Waits) >= h.Waits.CPU {
			if a, ok := syncAwayOf(h.Away); top.res == ResSyncRep && ok {
				return syncAway(a, h.Away, fmt.Sprintf("%s%s were %s of sampled sessions%s", top.label, topEvent(h.TopWaits, top.class), pct(sh), was(pct(share(top.v(base.Waits), base.Waits)))), loadName)
			}
			msg := fmt.Sprintf("%s%s were %s of sampled sessions%s", top.label, topEvent(h.TopWaits, top.class), pct(sh), was(pct(share(top.v(base.Waits), base.Waits))))
			if (top.res == ResDataRead || top.res == ResLog || top.res == ResIO) && h.Device.Name != "" {
				msg += fmt.Sprintf(", device %s await %.2f ms and queue %.1f%s", h.Device.Name, h.Device.AwaitMs, h.Device.Queue, was(fmt.Sprintf("%.2f ms, %.1f", base.Device.AwaitMs, base.Device.Queue)))
			}
			return Saturation{Resource: top.res, Sentence: msg}
		}
	}
	if h.CPUBusy >= CPUSaturatedShare && h.Host.Remote == "" { // this host's CPU is not the servers' elsewhere
		res := ResCPU
		msg := fmt.Sprintf("machine CPU %s busy%s, the load generator itself using %.1f cores (%s of the machine)", pct(h.CPUBusy), was(pct(base.CPUBusy)), h.LoadGenCores, pct(h.LoadGenShare))
		if total > 0 {
			msg += fmt.Sprintf(", %s of sampled sessions on CPU with no wait", pct(share(h.Waits.CPU, h.Waits)))
		} else if h.WaitsAbsent {
			msg += ", the sessions' waits not measured (no database sampler ran)"
		}
		if base.CPUBusy >= CPUSaturatedShare && at != "" { // the run needs least there: the rest was others'
			msg += fmt.Sprintf(", and as busy already %s, so other work on the machine took CPU too", at)
		}
		return Saturation{Resource: res, Sentence: msg}
	}
	if d := h.Device; d.Name != "" && (d.Util >= DeviceSaturatedUtil ||
		base.Device.AwaitMs > 0 && d.AwaitMs >= DeviceQueueGrowth*base.Device.AwaitMs && d.Queue >= DeviceQueueGrowth*max(base.Device.Queue, 1)) {
		return Saturation{Resource: ResDevice, Sentence: fmt.Sprintf("device %s %s busy, await %.2f ms, queue %.1f%s", d.Name, pct(d.Util), d.AwaitMs, d.Queue, was(fmt.Sprintf("%.2f ms, %.1f", base.Device.AwaitMs, base.Device.Queue)))}
	}
	if h.LagGrowth >= LagGrowthLimit {
		return Saturation{Resource: ResReplica, Sentence: fmt.Sprintf("standby %s's replay fell behind, lag %.1f s and growing %.2f s per second", h.Standby, h.ReplayLagSec, h.LagGrowth)}
	}
	if total > 0 && share(h.Waits.CPU, h.Waits) >= 1-DominantWaitShare && h.CPUBusy > 0 {
		return Saturation{Resource: ResNone, Sentence: fmt.Sprintf("sessions ran on CPU with no wait (%s of samples) but the machine CPU was only %s busy", pct(share(h.Waits.CPU, h.Waits)), pct(h.CPUBusy))}
	}
	return unsaturated(h)
}

// unsaturated is the sentence of hot windows in which nothing saturated: the CPU, the
// device and the waits as they were.
func unsaturated(h Evidence) Saturation {
	cpu, dev := "CPU "+pct(h.CPUBusy)+" busy", "device "+h.Device.Name+" "+pct(h.Device.Util)+" busy"
	if h.CPUAbsent {
		cpu = "CPU not measured"
	} else if h.Host.Remote != "" {
		cpu = "the servers' CPU not measured (they run on another host)"
	}
	switch { // the nodes' own hosts, read from their exporters, say what this machine cannot
	case len(h.NodeHosts) > 0 && h.Host.Remote != "":
		cpu = nodeHostsFigures(h.NodeHosts)
	case len(h.NodeHosts) > 0:
		cpu += ", " + nodeHostsFigures(h.NodeHosts)
	}
	if h.Device.Name == "" {
		dev = "no device measured"
	}
	waits := fmt.Sprintf("no wait class above %s of sessions", pct(DominantWaitShare))
	if h.WaitsAbsent {
		waits = "the sessions' waits not measured (no database sampler ran)"
	}
	return Saturation{Resource: ResNone, Sentence: fmt.Sprintf("%s, %s, %s", cpu, dev, waits)}
}

// atBase is a figure at the lowest load in brackets after the hot one's, " (10% at 1 VU)":
// "" when at is, the hot windows being the lowest load's own.
func atBase(figs, at string) string {
	if at == "" {
		return ""
	}
	return " (" + figs + " " + at + ")"
}

// atBaseAfter is a figure at the lowest load appended inside a bracket, "; 0.1 cores at 1
// VU": "" when at is.
func atBaseAfter(figs, at string) string {
	if at == "" {
		return ""
	}
	return "; " + figs + " " + at
}

func meanEvidence(es []Evidence) Evidence {
	var m Evidence
	n := float64(len(es))
	// Lag growth is the mean of the windows that measured a standby's lag, whether or not
	// another standby's went unmeasured.
	lagN := 0.0
	for _, e := range es {
		if e.Standby != "" {
			lagN++
		}
	}
	m.Host = meanHost(es)
	for _, e := range es {
		m.Waits.CPU += e.Waits.CPU / n
		m.Waits.Log += e.Waits.Log / n
		m.Waits.DataRead += e.Waits.DataRead / n
		m.Waits.OtherIO += e.Waits.OtherIO / n
		m.Waits.LWLock += e.Waits.LWLock / n
		m.Waits.Lock += e.Waits.Lock / n
		m.Waits.Client += e.Waits.Client / n
		m.Waits.SyncRep += e.Waits.SyncRep / n
		m.Waits.Other += e.Waits.Other / n
		m.CPUBusy += e.CPUBusy / n
		m.CPUAbsent = m.CPUAbsent || e.CPUAbsent
		m.WaitsAbsent = m.WaitsAbsent || e.WaitsAbsent
		m.Steal += e.Steal / n
		m.LoadGenCores += e.LoadGenCores / n
		m.LoadGenShare += e.LoadGenShare / n
		m.Device.Name = e.Device.Name
		m.Device.IOPS += e.Device.IOPS / n
		m.Device.ReadMBps += e.Device.ReadMBps / n
		m.Device.WriteMBps += e.Device.WriteMBps / n
		m.Device.AwaitMs += e.Device.AwaitMs / n
		m.Device.Queue += e.Device.Queue / n
		m.Device.Util += e.Device.Util / n
		m.ExpectedDeviceMBps += e.ExpectedDeviceMBps / n
		m.Away = append(m.Away, e.Away...)
		if e.ReplayLagSec >= m.ReplayLagSec {
			m.ReplayLagSec, m.Standby = e.ReplayLagSec, e.Standby
		}
		if e.Standby != "" {
			m.LagGrowth += e.LagGrowth / lagN
		}
		if m.LagAbsent == "" {
			m.LagAbsent = e.LagAbsent
		}
	}
	m.TopWaits = mergeWaitEvents(es)
	m.Hosts = meanHosts(es)
	m.NodeHosts = meanNodeHosts(es)
	return m
}

// mergeWaitEvents averages the top wait events of several windows (absent counts as 0).
func mergeWaitEvents(es []Evidence) []result.WaitEvent {
	sum := map[[3]string]float64{}
	for _, e := range es {
		for _, w := range e.TopWaits {
			sum[[3]string{w.Type, w.Event, w.Class}] += w.Sessions / float64(len(es))
		}
	}
	var out []result.WaitEvent
	for k, v := range sum {
		out = append(out, result.WaitEvent{Type: k[0], Event: k[1], Class: k[2], Sessions: v})
	}
	result.SortWaitEvents(out)
	return out
}

func pct(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }

// count prints a load with its unit, singular for one: "1 VU", "8 VUs".
func count(n float64, name string) string {
	if n == 1 && strings.HasSuffix(name, "s") {
		name = strings.TrimSuffix(name, "s")
	}
	return fmtNum(n) + " " + name
}

// LoadCount is count for a load point as a report keeps it (text): "1 thread", "8 threads";
// a point that is no number keeps the unit as given.
func LoadCount(point, name string) string {
	if point == "1" && strings.HasSuffix(name, "s") {
		name = strings.TrimSuffix(name, "s")
	}
	return point + " " + name
}

// fmtNum prints a load or count without a needless fraction.
func fmtNum(x float64) string {
	if x == float64(int64(x)) {
		return fmt.Sprintf("%d", int64(x))
	}
	return fmt.Sprintf("%.3g", x)
}
