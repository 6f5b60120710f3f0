package analyze

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/units"
)

// The validity verdicts judged on the nodes' own hosts, from their node_exporters' figures:
// steal (stealOnNodeHosts), fits-in-memory (nodeHostMemoryFacts) and foreign-io
// (foreignIOOnNodeHosts), each with the rule and thresholds this machine's figures get.

// stealOnNodeHosts is the steal verdict on the first window (by load) in which a node's
// host lost StealLimit of its CPU to the hypervisor, put down to its IO path when its
// busiest device did StealIOFloorIOPS; nil when none did.
func stealOnNodeHosts(ev []Evidence, loadName string) *Verdict {
	for _, e := range ev {
		for _, m := range machinesOf(e.NodeHosts) {
			h := m.host
			if h.Steal == nil || *h.Steal < StealLimit {
				continue
			}
			msg := fmt.Sprintf("steal time on %s was %s of its CPU at %s", h.Label(), pct(*h.Steal), count(e.Load, loadName))
			switch d := h.Device; {
			case d == nil:
				msg += "; its devices were not read, so the cause is not known: the hypervisor's work for virtio IO or another guest"
			case d.IOPS >= StealIOFloorIOPS:
				msg += fmt.Sprintf(" while its device %s did %.0f IOPS: on a VM the host's work for virtio IO shows as steal, so this may be the IO path's cost rather than a noisy neighbour's", d.Name, d.IOPS)
			default:
				msg += fmt.Sprintf(" with little IO (%.0f IOPS on %s): the hypervisor gave its CPU time to another guest or to the host during the run", d.IOPS, d.Name)
			}
			return &Verdict{Code: VSteal, Message: msg}
		}
	}
	return nil
}

// stealUnread names the servers on other hosts whose host's steal was read in no window,
// with why: "" when every one's was (their hosts are then judged, not this machine).
func stealUnread(ev []Evidence) string {
	var remote []string
	for _, e := range ev {
		for _, n := range e.Host.RemoteNodes {
			if !slices.Contains(remote, n) {
				remote = append(remote, n)
			}
		}
	}
	var out []string
	for _, n := range remote {
		why, read := "no node_exporter was read for it", false
		for _, e := range ev {
			if h, ok := nodeHostAt(e, n); ok {
				if h.Steal != nil {
					read = true
					break
				}
				why = h.Label() + ": " + h.Why(result.HostCPUSteal)
			}
		}
		if !read {
			out = append(out, why)
		}
	}
	return strings.Join(out, "; ")
}

// nodeHostMemoryFacts bounds the page cache by the memory the nodes' hosts had available
// at the run's start (their MemAvailable in the first step): the dataset is judged against
// the host with the least for each node's copy of the data, which it must fit in for every
// node to read from RAM. A machine that carries several nodes has one page cache for all
// their copies: each node's share is its available memory over its nodes. Nodes without
// host figures leave the facts as they were.
func nodeHostMemoryFacts(f *Facts, st *result.Step) error {
	hs, err := nodeHostsOf(st, withSeriesMeans(*st))
	if err != nil {
		return err
	}
	var least *machine
	each := func(m *machine) float64 { return *m.host.MemAvailable / float64(len(m.hosts)) }
	ms := machinesOf(hs)
	for i := range ms {
		if m := &ms[i]; m.host.MemAvailable != nil && (least == nil || each(m) < each(least)) {
			least = m
		}
	}
	if least != nil {
		f.PageCacheBytes, f.MemoryHost, f.MemoryOneHost = int64(*least.host.MemAvailable), least.host.Label(), len(ms) == 1 && len(hs) > 1
		f.PageCacheNodes = len(least.hosts)
	}
	return nil
}

// fitsOnNodeHosts is the fits-in-memory verdict judged on the nodes' hosts' memory.
func fitsOnNodeHosts(f Facts) *Verdict {
	hosts, least := "the nodes' hosts", ", the least of them"
	if f.MemoryOneHost {
		hosts, least = "the nodes' one host", ""
	}
	cache := fmt.Sprintf("%s, what %s had available at the start%s", units.FormatBytes(f.PageCacheBytes), f.MemoryHost, least)
	if f.PageCacheNodes > 1 {
		if !f.MemoryOneHost {
			least = ", the least share of them"
		}
		cache = fmt.Sprintf("%s, a node's share of the %s %s had available at the start%s: its %d nodes each cache a copy of the data of their own",
			units.FormatBytes(f.pageCacheEach()), units.FormatBytes(f.PageCacheBytes), f.MemoryHost, least, f.PageCacheNodes)
	}
	return &Verdict{Code: VFitsInMemory, Message: fmt.Sprintf("the dataset (%s) fits in the memory of %s (shared_buffers %s + page cache %s): reads come from RAM, so this measured memory and CPU, not storage reads",
		units.FormatBytes(f.DatasetBytes), hosts, units.FormatBytes(f.SharedBuffersBytes), cache)}
}

// foreignIOOnNodeHosts is the foreign-io verdict on the first window (by load) in which a
// node's host's busiest device moved more than the node's server accounts for (its
// pg_stat_io and WAL, 16+), or nil. A device that several nodes' exporters report alike
// (one machine's) carries all their servers' IO, and is judged against their sum.
func foreignIOOnNodeHosts(ev []Evidence, loadName string) *Verdict {
	for _, e := range ev {
		var hs []NodeHost
		for _, m := range machinesOf(e.NodeHosts) {
			if m.shared.SameDevices {
				hs = append(hs, m.host)
			} else {
				hs = append(hs, m.hosts...)
			}
		}
		for _, h := range hs {
			x := h.ExpectedMBps
			if d := h.Device; d != nil && x > 0 && d.MBps() > x*(1+ForeignIOShare)+ForeignIOFloorMBps {
				servers := "the node's server accounts"
				if h.label != "" {
					servers = "their servers account"
				}
				return &Verdict{Code: VForeignIO, Message: fmt.Sprintf("device %s of %s moved %.1f MB/s at %s but %s for %.1f MB/s: other IO shared the device",
					d.Name, h.Label(), d.MBps(), count(e.Load, loadName), servers, x)}
			}
		}
	}
	return nil
}
