package analyze

import (
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/result"
)

func hostCounters(node string, budget, cores, throttled, memBudget float64) map[string]float64 {
	return map[string]float64{
		result.HostName(node, result.HostCPUBudget):      budget,
		result.HostName(node, result.HostCPUCores):       cores,
		result.HostName(node, result.HostThrottledShare): throttled,
		result.HostName(node, result.HostMemoryBudget):   memBudget,
	}
}

func TestWhatSaturatedNamesTheHostAtItsBudget(t *testing.T) {
	c := hostCounters("primary", 0.6, 0.6, 0.41, 1<<30)
	for k, v := range hostCounters("standby1", 0.6, 0.12, 0.0, 1<<30) {
		c[k] = v
	}
	hot := Evidence{Load: 8, Hosts: hostsOf(c), Waits: Waits{CPU: 6, LWLock: 2}, CPUBusy: 0.7}
	base := Evidence{Load: 1, Hosts: hostsOf(hostCounters("primary", 0.6, 0.2, 0, 1<<30)), CPUBusy: 0.2}
	s := attribute(meanEvidence([]Evidence{hot}), base, "at 1 thread", "threads")
	if s.Resource != ResHost || !strings.Contains(s.Sentence, "primary's host: CPU at 100% of its 0.6-core budget, throttled in 41%") ||
		!strings.Contains(s.Sentence, "standby1's host at 20% of its budget") {
		t.Fatalf("%+v", s)
	}
	// Below its budget the host is not blamed.
	cool := Evidence{Load: 8, Hosts: hostsOf(hostCounters("primary", 0.6, 0.3, 0.02, 0)), Waits: Waits{CPU: 1}, CPUBusy: 0.3}
	if s := attribute(cool, base, "at 1 thread", "threads"); s.Resource == ResHost {
		t.Fatalf("%+v", s)
	}
	// Without host figures (nodes sharing a machine) nothing changes.
	if s := attribute(Evidence{Load: 8, CPUBusy: 0.95}, Evidence{Load: 1, CPUBusy: 0.3}, "at 1 thread", "threads"); s.Resource != ResCPU {
		t.Fatalf("%+v", s)
	}
}

func TestFitsInMemoryUsesTheNodesMemoryBudget(t *testing.T) {
	// 2 GiB free on the machine, but each node may cache only its 512 MiB budget.
	f := Facts{DatasetBytes: 700 << 20, SharedBuffersBytes: 128 << 20, PageCacheBytes: 2 << 30}
	hostMemoryFacts(&f, hostCounters("primary", 0.6, 0.1, 0, 512<<20))
	if f.HostMemoryBytes != 512<<20 || f.PageCacheBytes != 384<<20 {
		t.Fatalf("%+v", f)
	}
	if vs := Check(nil, nil, f, "threads"); hasCode(vs, VFitsInMemory) {
		t.Fatalf("a 700 MiB dataset on 512 MiB hosts was said to fit: %v", vs)
	}
	f = Facts{DatasetBytes: 300 << 20, SharedBuffersBytes: 128 << 20, PageCacheBytes: 2 << 30}
	hostMemoryFacts(&f, hostCounters("primary", 0.6, 0.1, 0, 512<<20))
	vs := Check(nil, nil, f, "threads")
	if !hasCode(vs, VFitsInMemory) || !strings.Contains(vs[0].Message, "memory budget of 512.0 MiB") {
		t.Fatalf("%v", vs)
	}
}

func hasCode(vs []Verdict, code string) bool {
	for _, v := range vs {
		if v.Code == code {
			return true
		}
	}
	return false
}

func TestSharedHostVerdictOnARoutingComparison(t *testing.T) {
	top := &result.Topology{Cluster: "lab", Nodes: []result.Node{{Name: "primary", Addr: "127.0.0.1:6500"}, {Name: "standby1", Addr: "127.0.0.1:6501"}}}
	r := &result.Result{}
	r.Meta.Topology = top
	v := sharedHostVerdict(r, []string{"routing=off", "routing=on"}, 2)
	if v == nil || v.Code != VSharedHost || v.NotJudged || !strings.Contains(v.Message, "share one machine's 2 CPUs") || !strings.Contains(v.Message, "--host-cpus") {
		t.Fatalf("%+v", v)
	}
	if v := sharedHostVerdict(r, []string{"a", "b"}, 2); v != nil {
		t.Fatalf("not a routing comparison: %+v", v)
	}
	top.Hosts, top.HostCPUs = "each node a modelled host: 0.6 cores", 0.6
	if v := sharedHostVerdict(r, []string{"routing=off", "routing=on"}, 2); v != nil {
		t.Fatalf("modelled hosts: %+v", v)
	}
	top.Hosts, top.HostCPUs, top.HostMemoryBytes = "each node a modelled host: 512 MiB", 0, 512<<20
	if v := sharedHostVerdict(r, []string{"routing=off", "routing=on"}, 2); v == nil || !strings.Contains(v.Message, "no CPU budget") {
		t.Fatalf("memory-only host model shares every CPU: %+v", v)
	}
	top.Hosts, top.HostMemoryBytes = "", 0
	top.Nodes[1].Addr = "10.0.0.2:5432"
	if v := sharedHostVerdict(r, []string{"routing=off", "routing=on"}, 2); v != nil {
		t.Fatalf("a standby on another machine: %+v", v)
	}
}

// A host held by its IO budget is named with the budget: the standby reads at its limit
// while its CPU idles.
func TestWhatSaturatedNamesTheHostAtItsIOBudget(t *testing.T) {
	c := hostCounters("standby1", 0.6, 0.1, 0, 256<<20)
	c[result.HostName("standby1", result.HostReadBPS)] = 20 << 20
	c[result.HostName("standby1", result.HostReadBPSBudget)] = 20 << 20
	for k, v := range hostCounters("primary", 0.6, 0.1, 0, 256<<20) {
		c[k] = v
	}
	c[result.HostName("primary", result.HostReadBPS)] = 8 << 20
	c[result.HostName("primary", result.HostReadBPSBudget)] = 20 << 20
	// A write limit with no write use: not the one that held.
	c[result.HostName("primary", result.HostWriteIOPS)] = 0
	c[result.HostName("primary", result.HostWriteIOPSBudget)] = 500
	hot := Evidence{Load: 8, Hosts: hostsOf(c), Waits: Waits{DataRead: 6}, CPUBusy: 0.3}
	base := Evidence{Load: 1, CPUBusy: 0.2}
	s := attribute(meanEvidence([]Evidence{hot, hot}), base, "at 1 thread", "threads")
	if s.Resource != ResHost || s.Sentence != "standby1's host: reads at 100% of its 20.0 MiB/s budget; primary's host reads at 40% of its budget" {
		t.Fatalf("%+v", s)
	}
	// Under 90% of it, the IO budget is not blamed.
	c[result.HostName("standby1", result.HostReadBPS)] = 10 << 20
	if s := attribute(Evidence{Load: 8, Hosts: hostsOf(c), CPUBusy: 0.3}, base, "at 1 thread", "threads"); s.Resource == ResHost {
		t.Fatalf("%+v", s)
	}
}
