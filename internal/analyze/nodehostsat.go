package analyze

import (
	"fmt"
	"sort"
	"strings"
)

// nodeHostHit is one node's host found short of one resource, with how far (for ranking).
type nodeHostHit struct {
	score float64
	msg   string
}

// saturatedNodeHost names the nodes' hosts that ran out of CPU or storage in the hot
// windows h, each beside its figures at the lowest load (base, at "at 1 VU"; none when at
// is ""), the most saturated first; ok is false when none did.
func saturatedNodeHost(h, base Evidence, at string) (Saturation, bool) {
	var hits []nodeHostHit
	for _, nh := range h.NodeHosts {
		b, _ := nodeHostAt(base, nh.Node)
		if hit, ok := hostCPUSaturated(nh, b, at); ok {
			hits = append(hits, hit)
		}
		if hit, ok := hostStorageSaturated(nh, b, at); ok {
			hits = append(hits, hit)
		}
	}
	if len(hits) == 0 {
		return Saturation{}, false
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	msgs := make([]string, len(hits))
	for i, x := range hits {
		msgs[i] = x.msg
	}
	return Saturation{Resource: ResHost, Sentence: strings.Join(msgs, "; ")}, true
}

// hostCPUSaturated judges a host's CPU: busy at CPUSaturatedShare, and its run queue at
// HostRunQueuePerCPU per CPU when both were read (busy alone otherwise, as this machine's).
func hostCPUSaturated(h, base NodeHost, at string) (nodeHostHit, bool) {
	if h.CPUBusy == nil || *h.CPUBusy < CPUSaturatedShare {
		return nodeHostHit{}, false
	}
	msg := fmt.Sprintf("%s CPU was %s busy", h.Label(), pct(*h.CPUBusy))
	switch {
	case h.RunQueue != nil && h.CPUs != nil:
		if *h.RunQueue < HostRunQueuePerCPU**h.CPUs {
			return nodeHostHit{}, false
		}
		msg += fmt.Sprintf(", run queue %.1f on %s CPUs", *h.RunQueue, fmtNum(*h.CPUs))
	case h.RunQueue != nil:
		msg += fmt.Sprintf(", run queue %.1f (its CPUs not read: %s)", *h.RunQueue, h.Why("cpus"))
	default:
		msg += fmt.Sprintf(" (its run queue not read: %s)", h.Why("run_queue"))
	}
	if base.CPUBusy != nil && at != "" {
		was := pct(*base.CPUBusy) + " busy"
		if base.RunQueue != nil {
			was += fmt.Sprintf(", run queue %.1f", *base.RunQueue)
		}
		msg += atBase(was, at)
	}
	return nodeHostHit{score: *h.CPUBusy, msg: msg}, true
}

// hostStorageSaturated judges a host's busiest device as this machine's is judged (busy at
// DeviceSaturatedUtil, or its await and queue grown DeviceQueueGrowth times from the
// lowest load), or, when no device of the host was read, its CPU time in iowait.
func hostStorageSaturated(h, base NodeHost, at string) (nodeHostHit, bool) {
	d := h.Device
	if d == nil {
		if h.IOWait == nil || *h.IOWait < HostIOWaitShare {
			return nodeHostHit{}, false
		}
		msg := fmt.Sprintf("%s spent %s of its CPU time waiting for IO (iowait)", h.Label(), pct(*h.IOWait))
		if base.IOWait != nil {
			msg += atBase(pct(*base.IOWait), at)
		}
		return nodeHostHit{score: *h.IOWait, msg: msg + "; none of its devices was read"}, true
	}
	var b Device
	if base.Device != nil && base.Device.Name == d.Name {
		b = *base.Device
	}
	grew := b.AwaitMs > 0 && d.AwaitMs >= DeviceQueueGrowth*b.AwaitMs && d.Queue >= DeviceQueueGrowth*max(b.Queue, 1)
	if d.Util < DeviceSaturatedUtil && !grew {
		return nodeHostHit{}, false
	}
	msg := fmt.Sprintf("%s device %s was %s busy, await %.2f ms, queue %.1f, %.0f IOPS", h.Label(), d.Name, pct(d.Util), d.AwaitMs, d.Queue, d.IOPS)
	if h.IOWait != nil {
		msg += ", iowait " + pct(*h.IOWait)
	}
	if b.Name != "" {
		msg += atBase(fmt.Sprintf("%s busy, %.2f ms, queue %.1f", pct(b.Util), b.AwaitMs, b.Queue), at)
	}
	return nodeHostHit{score: max(d.Util, DeviceSaturatedUtil), msg: msg}, true
}

// nodeHostsFigures says in a few words how busy each node's host was, for a sentence
// that found nothing saturated: "pg1's host CPU 40% busy, device vdb 12% busy".
func nodeHostsFigures(hs []NodeHost) string {
	var parts []string
	for _, h := range hs {
		if !h.Measured() {
			parts = append(parts, h.Label()+" not measured ("+h.Why("")+")")
			continue
		}
		s := h.Label() + " CPU "
		if h.CPUBusy != nil {
			s += pct(*h.CPUBusy) + " busy"
		} else {
			s += "not read (" + h.Why("cpu_busy") + ")"
		}
		if h.Device != nil {
			s += fmt.Sprintf(", device %s %s busy", h.Device.Name, pct(h.Device.Util))
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// nodeHostsNetErrors notes the hosts that counted network errors and drops in the hot
// windows (at HostNetErrorsPerSec, and more than at the lowest load): "" when none did.
func nodeHostsNetErrors(h, base Evidence) string {
	var parts []string
	for _, nh := range h.NodeHosts {
		if nh.NetErrors == nil || *nh.NetErrors < HostNetErrorsPerSec {
			continue
		}
		if b, ok := nodeHostAt(base, nh.Node); ok && b.NetErrors != nil && *b.NetErrors >= *nh.NetErrors {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s counted %.1f network errors and drops per second", nh.Label(), *nh.NetErrors))
	}
	return strings.Join(parts, ", ")
}

// nodeHostsUnjudged names the hosts whose figures were absent, each with why, for a
// sentence that named what saturated elsewhere: "" when every host was read.
func nodeHostsUnjudged(hs []NodeHost) string {
	var parts []string
	for _, h := range hs {
		if !h.Measured() {
			parts = append(parts, h.Label()+" not judged ("+h.Why("")+")")
		}
	}
	return strings.Join(parts, ", ")
}
