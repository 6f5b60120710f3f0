package analyze

import (
	"fmt"
	"net"
	"sort"
	"strings"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/units"
)

// HostSaturatedShare is the share of its CPU budget at which a modelled host counts as
// pinned; HostThrottledShare the share of quota periods it must have been throttled in.
const (
	HostSaturatedShare = 0.90
	HostThrottledShare = 0.10
	// HostIOSaturatedShare is the share of an IO budget (bytes or operations per second,
	// read or written) at which a modelled host counts as held by it.
	HostIOSaturatedShare = 0.90
)

// ResHost is the resource "a node's modelled host": the sentence names the node.
const ResHost = "a node's host"

// HostUse is what one node's modelled host (its control group) used in a window.
type HostUse struct {
	Node string `json:"node"`
	// CPUBudget is its quota in cores (0: no CPU budget); Cores the CPU it used.
	CPUBudget float64 `json:"cpu_budget"`
	Cores     float64 `json:"cores"`
	// Throttled is the share of quota periods it was throttled in; ThrottledAbsent when
	// no quota period passed (no CPU budget).
	Throttled       float64 `json:"throttled"`
	ThrottledAbsent bool    `json:"throttled_absent,omitempty"`
	MemoryBudget    float64 `json:"memory_budget"`
	PageCache       float64 `json:"page_cache"`
	// IO is its IO per second against its IO budget, one entry per limit it has.
	IO []HostIO `json:"io,omitempty"`
}

// HostIO is one IO limit of a host and what the host used of it.
type HostIO struct {
	// What is "reads" or "writes"; Ops tells operations per second from bytes per second.
	What   string  `json:"what"`
	Ops    bool    `json:"ops,omitempty"`
	Use    float64 `json:"use"`
	Budget float64 `json:"budget"`
}

// hostIOFigures pairs each IO figure with its budget's.
var hostIOFigures = []struct {
	use, budget, what string
	ops               bool
}{{result.HostReadBPS, result.HostReadBPSBudget, "reads", false}, {result.HostWriteBPS, result.HostWriteBPSBudget, "writes", false},
	{result.HostReadIOPS, result.HostReadIOPSBudget, "reads", true}, {result.HostWriteIOPS, result.HostWriteIOPSBudget, "writes", true}}

// hostIOOf reads a node's IO figures that have a budget from a step's counters.
func hostIOOf(c map[string]float64, node string) []HostIO {
	var out []HostIO
	for _, f := range hostIOFigures {
		b, ok := c[result.HostName(node, f.budget)]
		u, measured := c[result.HostName(node, f.use)]
		if ok && b > 0 && measured {
			out = append(out, HostIO{What: f.what, Ops: f.ops, Use: u, Budget: b})
		}
	}
	return out
}

// budgetText writes an IO budget: "20.0 MiB/s" or "500 IOPS".
func (h HostIO) budgetText() string {
	if h.Ops {
		return fmtNum(h.Budget) + " IOPS"
	}
	return units.FormatBytes(int64(h.Budget)) + "/s"
}

// hostsOf reads the host sampler's figures of a step's counters, by node name; figures
// read from a node's node_exporter are not a modelled host's.
func hostsOf(c map[string]float64) []HostUse {
	by := map[string]*HostUse{}
	for k, v := range c {
		node, fig, ok := result.ParseHostName(k)
		if !ok || isExporterName(k) {
			continue
		}
		h := by[node]
		if h == nil {
			h = &HostUse{Node: node, ThrottledAbsent: true}
			by[node] = h
		}
		switch fig {
		case result.HostCPUBudget:
			h.CPUBudget = v
		case result.HostCPUCores:
			h.Cores = v
		case result.HostThrottledShare:
			h.Throttled, h.ThrottledAbsent = v, false
		case result.HostMemoryBudget:
			h.MemoryBudget = v
		case result.HostPageCacheBytes:
			h.PageCache = v
		}
	}
	out := make([]HostUse, 0, len(by))
	for _, h := range by {
		h.IO = hostIOOf(c, h.Node)
		out = append(out, *h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}

// meanHosts averages hosts over windows, node by node.
func meanHosts(es []Evidence) []HostUse {
	sum := map[string]*HostUse{}
	n := map[string]float64{}
	thr := map[string]float64{}
	var order []string
	for _, e := range es {
		for _, h := range e.Hosts {
			s := sum[h.Node]
			if s == nil {
				s = &HostUse{Node: h.Node, CPUBudget: h.CPUBudget, MemoryBudget: h.MemoryBudget, ThrottledAbsent: true}
				sum[h.Node] = s
				order = append(order, h.Node)
			}
			n[h.Node]++
			s.Cores += h.Cores
			s.PageCache += h.PageCache
			for _, io := range h.IO {
				addIO(s, io)
			}
			if !h.ThrottledAbsent {
				s.Throttled += h.Throttled
				s.ThrottledAbsent = false
				thr[h.Node]++
			}
		}
	}
	sort.Strings(order)
	var out []HostUse
	for _, node := range order {
		s := *sum[node]
		s.Cores /= n[node]
		s.PageCache /= n[node]
		for i := range s.IO {
			s.IO[i].Use /= n[node]
		}
		if thr[node] > 0 {
			s.Throttled /= thr[node]
		}
		out = append(out, s)
	}
	return out
}

// addIO adds one window's use of an IO limit to a host's sum.
func addIO(s *HostUse, io HostIO) {
	for i := range s.IO {
		if s.IO[i].What == io.What && s.IO[i].Ops == io.Ops {
			s.IO[i].Use += io.Use
			return
		}
	}
	s.IO = append(s.IO, io)
}

// saturatedHost returns the sentence for the node whose modelled host ran nearest a budget
// it was held to: its CPU budget (at it and throttled) or an IO limit (at it), or ok false.
func saturatedHost(hosts []HostUse) (Saturation, bool) {
	var best *HostUse
	var bestIO *HostIO
	bestShare := 0.0
	for i := range hosts {
		h := &hosts[i]
		if h.CPUBudget > 0 && !h.ThrottledAbsent && h.Cores >= HostSaturatedShare*h.CPUBudget && h.Throttled >= HostThrottledShare && h.Cores/h.CPUBudget > bestShare {
			best, bestIO, bestShare = h, nil, h.Cores/h.CPUBudget
		}
		for j := range h.IO {
			io := &h.IO[j]
			if sh := io.Use / io.Budget; sh >= HostIOSaturatedShare && sh > bestShare {
				best, bestIO, bestShare = h, io, sh
			}
		}
	}
	if best == nil {
		return Saturation{}, false
	}
	var msg string
	if bestIO == nil {
		msg = fmt.Sprintf("%s's host: CPU at %s of its %s-core budget, throttled in %s of the window's quota periods",
			best.Node, pct(best.Cores/best.CPUBudget), fmtNum(best.CPUBudget), pct(best.Throttled))
	} else {
		msg = fmt.Sprintf("%s's host: %s at %s of its %s budget", best.Node, bestIO.What, pct(bestShare), bestIO.budgetText())
	}
	for _, o := range hosts {
		if o.Node == best.Node {
			continue
		}
		if bestIO == nil && o.CPUBudget > 0 {
			msg += fmt.Sprintf("; %s's host at %s of its budget", o.Node, pct(o.Cores/o.CPUBudget))
		}
		for _, io := range o.IO {
			if bestIO != nil && io.What == bestIO.What && io.Ops == bestIO.Ops {
				msg += fmt.Sprintf("; %s's host %s at %s of its budget", o.Node, io.What, pct(io.Use/io.Budget))
			}
		}
	}
	return Saturation{Resource: ResHost, Sentence: msg}, true
}

// hostMemoryFacts bounds the page cache by the nodes' memory budgets: a node's control
// group holds shared_buffers and its page cache, so what it can cache is its budget less
// shared_buffers (the smallest over nodes), whatever the machine has free.
func hostMemoryFacts(f *Facts, c map[string]float64) {
	var budget float64
	for _, h := range hostsOf(c) {
		if h.MemoryBudget > 0 && (budget == 0 || h.MemoryBudget < budget) {
			budget = h.MemoryBudget
		}
	}
	if budget == 0 {
		return
	}
	f.HostMemoryBytes = int64(budget)
	f.PageCacheBytes = max(int64(budget)-f.SharedBuffersBytes, 0)
}

// VSharedHost is the verdict on a routing comparison whose nodes shared one machine's CPUs,
// memory and page cache: routing moved work between them but could not add capacity.
const VSharedHost = "shared-host"

// sharedHostVerdict judges a comparison of routing=off and routing=on: it fires when the
// result's topology has two or more nodes, all on this machine (loopback addresses), with
// no CPU budget (a memory-only host model still shares every CPU). A result without a
// topology (a synthetic one) gets none.
func sharedHostVerdict(r *result.Result, names []string, cores int) *Verdict {
	routing := false
	for _, n := range names {
		if strings.HasPrefix(n, "routing=") {
			routing = true
		}
	}
	if !routing {
		return nil
	}
	t := r.Meta.Topology
	if t == nil || t.HostCPUs > 0 || len(t.Nodes) < 2 {
		return nil
	}
	for _, n := range t.Nodes {
		host, _, err := net.SplitHostPort(n.Addr)
		if err != nil {
			host = n.Addr
		}
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return nil
		}
	}
	machine := "one machine's CPUs"
	if cores > 0 {
		machine = fmt.Sprintf("one machine's %d CPUs", cores)
	}
	budgets := "with no budgets"
	if t.Hosts != "" {
		budgets = "with no CPU budget (" + t.Hosts + ")"
	}
	return &Verdict{Code: VSharedHost, Message: fmt.Sprintf("the %d nodes (%s) share %s, memory and page cache, %s: routing can move reads to a standby but not add capacity here, so this comparison says nothing of routing's gain on separate servers; model hosts (agbench cluster create --host-cpus N --host-memory SIZE) or run against a real cluster",
		len(t.Nodes), nodeNames(t.Nodes), machine, budgets)}
}

func nodeNames(ns []result.Node) string {
	names := make([]string, len(ns))
	for i, n := range ns {
		names[i] = n.Name
	}
	return strings.Join(names, ", ")
}
