package analyze

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// Nodes whose exporters describe one machine. Nodes in network namespaces of one machine
// (agbench cluster create --netns), or in containers of one kernel, each have an exporter,
// and every one of them reads the same /proc: their CPU, run queue and memory are that
// machine's figures, not each node's, and judging them node by node would name one
// saturated machine as several. Such hosts are found by what their exporters say of the
// machine (its boot time, CPUs and memory, and its name where node_uname_info gave one) and
// judged once, naming the nodes they carry. Containers of one kernel whose hostnames
// differ are then kept apart: said twice rather than two machines said once.
// Devices are another matter: an exporter may be told to watch some devices only, so two
// exporters of one machine may describe different disks; those are judged once only when
// both exporters report the same devices, and node by node otherwise. Network figures are
// each namespace's own and stay per node.

// BootTimeTolerance is how far apart (in seconds) two exporters' node_boot_time_seconds
// may be and still be one machine's: the kernel gives it in whole seconds.
const BootTimeTolerance = 0.5

// SharedHost is one machine that the exporters of several nodes describe: they report one
// boot time (node_boot_time_seconds) and the same CPUs and memory.
type SharedHost struct {
	// Nodes are the nodes it carries, by their names in series.
	Nodes    []string `json:"nodes"`
	BootTime float64  `json:"boot_time_s"`
	// Nodename is the machine's name (node_uname_info's), when its exporters gave it.
	Nodename string `json:"nodename,omitempty"`
	// SameDevices tells whether every node's exporter reported the same devices: their
	// device figures are then the machine's too, judged once; else each node's are judged
	// as its own (each exporter watched devices of its own).
	SameDevices bool `json:"same_devices"`
}

// Label names the machine in sentences: "the host of primary and standby1 (one machine:
// db1, boot 2026-11-28 05:15:29 UTC)".
func (s SharedHost) Label() string {
	return "the host of " + andList(s.Nodes) + " (one machine: " + s.Boot() + ")"
}

// Sentence says which nodes are on the machine and what of their figures is its:
// "primary, standby1 and standby2 are on one host (boot 2026-11-28 05:15:29 UTC): their
// exporters' CPU, run queue and memory are that machine's, judged once".
func (s SharedHost) Sentence() string {
	figs := []string{"CPU", "run queue", "memory"}
	if s.SameDevices {
		figs = append(figs, "devices")
	}
	return andList(s.Nodes) + " are on one host (" + s.Boot() + "): their exporters' " + andList(figs) + " are that machine's, judged once"
}

// Boot names the machine by its name, when known, and when it booted (in UTC): "db1, boot
// 2026-11-28 05:15:29 UTC".
func (s SharedHost) Boot() string {
	if s.Nodename != "" {
		return s.Nodename + ", boot " + bootText(s.BootTime)
	}
	return "boot " + bootText(s.BootTime)
}

// Others names the nodes on the machine but this one: "standby1 and standby2".
func (s SharedHost) Others(node string) string {
	return andList(slices.DeleteFunc(slices.Clone(s.Nodes), func(n string) bool { return n == node }))
}

// bootText writes a boot time (Unix seconds) as a date in UTC.
func bootText(s float64) string {
	return time.Unix(int64(math.Round(s)), 0).UTC().Format("2006-01-02 15:04:05 UTC")
}

// andList joins names as a sentence does: "a", "a and b", "a, b and c".
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// machine is the hosts of nodes that are one machine (one node's alone when no other
// node's exporter describes its machine), with host, their figures as the machine's.
type machine struct {
	shared SharedHost // Nodes has one name when the machine carries one node
	hosts  []NodeHost
	host   NodeHost
}

// sameMachine tells whether two nodes' exporters describe one machine: the same boot time,
// and the same CPUs, memory, name and architecture where both read them. Hosts without a boot time are kept
// apart: nothing says they are one.
func sameMachine(a, b NodeHost) bool {
	if a.BootTime == nil || b.BootTime == nil || math.Abs(*a.BootTime-*b.BootTime) > BootTimeTolerance {
		return false
	}
	for _, p := range [][2]*float64{{a.CPUs, b.CPUs}, {a.MemTotal, b.MemTotal}} {
		if p[0] != nil && p[1] != nil && *p[0] != *p[1] {
			return false
		}
	}
	for _, p := range [][2]string{{a.Nodename, b.Nodename}, {a.Machine, b.Machine}} {
		if p[0] != "" && p[1] != "" && p[0] != p[1] {
			return false
		}
	}
	return true
}

// machinesOf groups the nodes' hosts (sorted by node, as nodeHostsOf gives them) into the
// machines they are, in the order of each machine's first node.
func machinesOf(hs []NodeHost) []machine {
	var out []machine
	for _, h := range hs {
		i := slices.IndexFunc(out, func(m machine) bool { return sameMachine(m.hosts[0], h) })
		if i < 0 {
			out = append(out, machine{hosts: []NodeHost{h}})
			continue
		}
		out[i].hosts = append(out[i].hosts, h)
	}
	for i := range out {
		m := &out[i]
		m.shared = SharedHost{SameDevices: true}
		for _, h := range m.hosts {
			m.shared.Nodes = append(m.shared.Nodes, h.Node)
			m.shared.SameDevices = m.shared.SameDevices && slices.Equal(h.Devices, m.hosts[0].Devices)
		}
		if m.hosts[0].BootTime != nil {
			m.shared.BootTime = *m.hosts[0].BootTime
		}
		for _, h := range m.hosts {
			m.shared.Nodename = cmp.Or(m.shared.Nodename, h.Nodename)
		}
		m.host = m.merged(m.hosts)
	}
	return out
}

// machineWide are the figures an exporter reads of its whole machine, by their names after
// "host.<node>.": the same whichever node's exporter read them.
var machineWide = map[string]bool{result.HostCPUs: true, result.HostCPUBusy: true, result.HostCPUIOWait: true, result.HostCPUSteal: true,
	result.HostRunQueue: true, result.HostCPUPressure: true, result.HostMemTotal: true, result.HostMemAvailable: true, result.HostMemPageCache: true,
	result.HostBootTime: true}

// merged are the machine-wide figures of these hosts (the machine's nodes', in one window):
// each from the first host that read it, labelled as the machine when it carries more than
// one node. The device is the busiest of theirs; network figures, each namespace's own,
// are left out of a machine of several nodes.
func (m machine) merged(hs []NodeHost) NodeHost {
	if len(hs) == 0 {
		return NodeHost{}
	}
	out := hs[0]
	if len(m.shared.Nodes) < 2 {
		return out
	}
	out.Role, out.label = "", m.shared.Label()
	out.NetRxBPS, out.NetTxBPS, out.NetErrors = nil, nil, nil
	var expected float64
	for _, h := range hs {
		for i, f := range out.figures() {
			if *f.v == nil && machineWide[f.name] {
				*f.v = *h.figures()[i].v
			}
		}
		if h.Device != nil && (out.Device == nil || busier(*h.Device, *out.Device)) {
			out.Device = h.Device
		}
		if out.Absent != "" && h.Absent == "" {
			out.Absent, out.Missing, out.Source = "", h.Missing, h.Source
		}
		if h.ExpectedMBps <= 0 { // one server's IO not known: the machine's is not either
			expected = math.Inf(-1)
		}
		expected += h.ExpectedMBps
	}
	out.ExpectedMBps = max(expected, 0)
	return out
}

// at is the machine's hosts in another window (the lowest load's), merged as in this one.
func (m machine) at(e Evidence) NodeHost {
	var hs []NodeHost
	for _, n := range m.shared.Nodes {
		if h, ok := nodeHostAt(e, n); ok {
			hs = append(hs, h)
		}
	}
	return m.merged(hs)
}

// SharedHosts are the machines that carry more than one node in any of these windows (the
// nodes' hosts averaged over them), by their first node.
func SharedHosts(ev []Evidence) []SharedHost { return SharedHostsAmong(meanNodeHosts(ev)) }

// SharedHostsAmong are the machines that carry more than one of these hosts (the nodes'
// hosts of one window, sorted by node), by their first node.
func SharedHostsAmong(hs []NodeHost) []SharedHost {
	var out []SharedHost
	for _, m := range machinesOf(hs) {
		if len(m.shared.Nodes) > 1 {
			out = append(out, m.shared)
		}
	}
	return out
}
