package analyze

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agbench/agbench/internal/result"
)

// nodeHostHit is one node's host found short of one resource, with how far (for ranking).
type nodeHostHit struct {
	score float64
	msg   string
}

// saturatedNodeHost names the nodes' hosts that ran out of CPU or storage in the hot
// windows h, each beside its figures at the lowest load (base, at "at 1 VU"; none when at
// is ""), the most saturated first; ok is false when none did. Nodes whose exporters
// describe one machine are judged as that machine, once (onehost.go).
func saturatedNodeHost(h, base Evidence, at string) (Saturation, bool) {
	var hits []nodeHostHit
	for _, m := range machinesOf(h.NodeHosts) {
		b := m.at(base)
		if hit, ok := hostCPUSaturated(m.host, b, at); ok {
			hit.msg += budgetsBeside(h.Hosts, m.shared.Nodes)
			hits = append(hits, hit)
		}
		if m.shared.SameDevices {
			if hit, ok := hostStorageSaturated(m.host, b, at); ok {
				hits = append(hits, hit)
			}
			continue
		}
		for _, nh := range m.hosts { // each exporter watched devices of its own
			nb, _ := nodeHostAt(base, nh.Node)
			if hit, ok := hostStorageSaturated(nh, nb, at); ok {
				hits = append(hits, hit)
			}
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

// hostCPUSaturated judges a host's CPU (hostCPUShort) and says how: its busy share and
// run queue, beside the lowest load's (base, at "at 1 VU"; none when at is ""), and
// whether it was short of CPU there already.
func hostCPUSaturated(h, base NodeHost, at string) (nodeHostHit, bool) {
	if !hostCPUShort(h) {
		return nodeHostHit{}, false
	}
	msg := fmt.Sprintf("%s CPU was %s busy", h.Label(), pct(*h.CPUBusy)) + cpuWaitWords(h)
	if base.CPUBusy != nil && at != "" {
		was := pct(*base.CPUBusy) + " busy"
		switch {
		case h.CPUPressure != nil && base.CPUPressure != nil:
			was += ", some task waiting " + pct(*base.CPUPressure)
		case h.CPUPressure == nil && base.RunQueue != nil:
			was += fmt.Sprintf(", run queue %.1f", *base.RunQueue)
		}
		msg += atBase(was, at)
		if hostCPUShort(base) { // the run needs least there: the rest was others'
			msg += ", and as short of CPU already " + at + ", so other work on the host took CPU too"
		}
	}
	return nodeHostHit{score: *h.CPUBusy, msg: msg}, true
}

// cpuWaitWords says what tells the host short of CPU (hostCPUShort): its CPU pressure where
// read, else its run queue, said to be sampled at scrapes with the exporter's own threads.
func cpuWaitWords(h NodeHost) string {
	if h.CPUPressure != nil {
		return fmt.Sprintf(", some task waiting for a CPU %s of the time (CPU pressure)", pct(*h.CPUPressure))
	}
	const sampled = "sampled at scrapes, the exporter's own threads counted; CPU pressure not read: "
	switch {
	case h.RunQueue != nil && h.CPUs != nil:
		return fmt.Sprintf(", run queue %.1f on %s CPUs (%s%s)", *h.RunQueue, fmtNum(*h.CPUs), sampled, h.Why(result.HostCPUPressure))
	case h.RunQueue != nil:
		return fmt.Sprintf(", run queue %.1f (%s%s; its CPUs not read: %s)", *h.RunQueue, sampled, h.Why(result.HostCPUPressure), h.Why("cpus"))
	}
	return fmt.Sprintf(" (its CPU pressure not read: %s; its run queue not read: %s)", h.Why(result.HostCPUPressure), h.Why(result.HostRunQueue))
}

// hostCPUShort tells a host short of CPU: busy at CPUSaturatedShare, and some task waiting
// for a CPU HostCPUPressureShare of the time where its CPU pressure was read; else its run
// queue at HostRunQueuePerCPU per CPU when both were read (busy alone otherwise, as this
// machine's).
func hostCPUShort(h NodeHost) bool {
	if h.CPUBusy == nil || *h.CPUBusy < CPUSaturatedShare {
		return false
	}
	if h.CPUPressure != nil {
		return *h.CPUPressure >= HostCPUPressureShare
	}
	return h.RunQueue == nil || h.CPUs == nil || *h.RunQueue >= HostRunQueuePerCPU**h.CPUs
}

// budgetsBeside says, after a machine's CPU named for these nodes, that the nodes among them
// with a CPU budget (a control group, cluster create's host budgets) had the machine's CPU
// read by their exporters, not their budget's, which their control groups' figures tell:
// "; that is the machine's CPU, not a budget's: by its control group primary used 45% of
// its 0.6 cores". "" when none of them had a CPU budget.
func budgetsBeside(budgets []HostUse, nodes []string) string {
	var parts []string
	for _, u := range budgets {
		if u.CPUBudget > 0 && slices.Contains(nodes, u.Node) {
			parts = append(parts, fmt.Sprintf("%s used %s of its %s cores", u.Node, pct(u.Cores/u.CPUBudget), fmtNum(u.CPUBudget)))
		}
	}
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return "; that is the machine's CPU, not a budget's: by its control group " + parts[0]
	}
	return "; that is the machine's CPU, not a budget's: by their control groups " + andList(parts)
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
// that found nothing saturated: "pg1's host CPU 40% busy, device vdb 12% busy"; a machine
// that carries several nodes once, with each node's device when their exporters watched
// devices of their own ("the host of pg1 and pg2 (…) CPU 40% busy, pg1's device loop3 12%
// busy, pg2's device loop4 1% busy").
func nodeHostsFigures(hs []NodeHost) string {
	var parts []string
	for _, m := range machinesOf(hs) {
		h := m.host
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
		switch {
		case m.shared.SameDevices && h.Device != nil:
			s += fmt.Sprintf(", device %s %s busy", h.Device.Name, pct(h.Device.Util))
		case !m.shared.SameDevices:
			for _, nh := range m.hosts {
				if nh.Device != nil {
					s += fmt.Sprintf(", %s's device %s %s busy", nh.Node, nh.Device.Name, pct(nh.Device.Util))
				}
			}
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
	for _, m := range machinesOf(hs) {
		if h := m.host; !h.Measured() {
			parts = append(parts, h.Label()+" not judged ("+h.Why("")+")")
		}
	}
	return strings.Join(parts, ", ")
}
