package analyze

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agbench/agbench/internal/result"
)

// Verdicts about the host the samplers and the load generator run on: is the load
// generator short of the CPU it may use, did other work on the host take CPU, did the
// hypervisor. They rest on CPU measured from /proc (the servers' processes, the load
// generator's own, the machine's), and apply to servers on this host only.

// Host thresholds.
const (
	// LoadGenAloneShare is the share of the CPU the load generator may use (its affinity
	// and control-group quota) beyond which it is near its own cap.
	LoadGenAloneShare = 0.80
	// LoadGenWaitLimit is how long the load generator's threads may wait for a CPU while
	// runnable, in seconds per second of the window (schedstat's run-queue wait), before a
	// generator confined to fewer CPUs than the machine has, with those saturated
	// (CPUSaturatedShare), is called short of CPU.
	LoadGenWaitLimit = 0.20
	// StealLimit is the mean steal share (CPU time the hypervisor did not give this VM)
	// that marks a verdict.
	StealLimit = 0.05
	// StealIOFloorIOPS is the device traffic above which steal is put down to the IO path:
	// on a VM, the host's work for virtio IO shows as steal. Measured from /proc/stat on the
	// 2-vCPU VM this was built on, 4 kB direct random reads with fio: 1.9% steal at 500 IOPS,
	// 4.1% at 2,000, 9.9% at 5,000, 12–15% at 19k–41k; with no IO 0–0.3%, and 0.3–0.6% with
	// two CPU burners on both CPUs.
	StealIOFloorIOPS = 1000
	// ForeignCPUAllowanceCores is CPU on the host that no measured process accounts for
	// and is not taken for other work (system daemons, the kernel's own threads);
	// ForeignCPUShare is the share of the machine that, used by other work at the run's
	// lowest load, marks a busy host.
	ForeignCPUAllowanceCores = 0.1
	ForeignCPUShare          = 0.25
)

// HostEvidence is what one step's window says of the host's CPU.
type HostEvidence struct {
	// ServerCPU is the CPU the servers on this host used, in cores, measured from /proc
	// (their postmasters and all their processes); ServerCPUAbsent says why it was not
	// measured for some node (then ServerCPU is not a total and is not used).
	ServerCPU       float64 `json:"server_cpu_cores"`
	ServerCPUAbsent string  `json:"server_cpu_absent,omitempty"`
	// Nodes counts the servers the database sampler watched; Remote names those on another
	// host ("primary at 10.0.0.5"): the host's CPU, steal and busyness do not describe them.
	Nodes  int    `json:"nodes,omitempty"`
	Remote string `json:"remote,omitempty"`
	// RemoteNodes names those servers, as series name them (result.SeriesNodeName).
	RemoteNodes []string `json:"remote_nodes,omitempty"`
	// IRQ is the machine's share of CPU time in interrupts (0..1): no process's.
	IRQ float64 `json:"irq"`
	// Cap is the CPU the load generator could use (zero when not recorded).
	Cap result.CPUCap `json:"loadgen_cap"`
	// SetBusy and OtherBusy: how busy the load generator's affinity CPUs and the others
	// were (0..1), when its affinity leaves CPUs out (SetKnown).
	SetBusy   float64 `json:"loadgen_set_busy,omitempty"`
	OtherBusy float64 `json:"other_set_busy,omitempty"`
	SetKnown  bool    `json:"loadgen_set_known,omitempty"`
	// RunDelay is how long the load generator's threads waited for a CPU while runnable,
	// per second (RunDelayKnown: the kernel keeps schedstat).
	RunDelay      float64 `json:"loadgen_run_delay,omitempty"`
	RunDelayKnown bool    `json:"loadgen_run_delay_known,omitempty"`
}

// hostEvidenceOf reads a step's host figures: the servers' CPU (the counters c) and where
// they run (the sample section), the load generator's cap and its CPUs' busyness.
func hostEvidenceOf(st *result.Step, c map[string]float64) (HostEvidence, error) {
	h := HostEvidence{IRQ: c[result.OSCPUIRQ], Cap: st.Client.Cap}
	if v, ok := c[result.OSCPULoadGenSetBusy]; ok {
		h.SetBusy, h.OtherBusy, h.SetKnown = v, c[result.OSCPUOtherSetBusy], true
	}
	h.RunDelay = c[result.OSSelfRunDelay]
	if _, ok := c[result.OSSelfRunDelay]; ok {
		h.RunDelayKnown = true
	}
	x, err := st.Sample()
	if x == nil || err != nil {
		return h, err
	}
	var remote []string
	for _, name := range slices.Sorted(maps.Keys(x.Nodes)) {
		info := x.Nodes[name].Info
		h.Nodes++
		if info.Remote != "" {
			remote = append(remote, name+" at "+info.Remote)
			h.RemoteNodes = append(h.RemoteNodes, result.SeriesNodeName(name))
			continue
		}
		if v, ok := c[result.PGName(name, result.PGServerCPUCores)]; ok {
			h.ServerCPU += v
		} else if h.ServerCPUAbsent == "" {
			why := info.ServerCPUAbsent
			if why == "" {
				why = "not recorded in this result"
			}
			h.ServerCPUAbsent = name + ": " + why
		}
	}
	h.Remote = strings.Join(remote, ", ")
	return h, nil
}

// meanHost is the mean of repeats' host evidence; an absence in any repeat is kept. The
// load generator's set and run delay are averaged over the repeats that measured them
// only: a repeat without them is absent, not 0.
func meanHost(es []Evidence) HostEvidence {
	var m HostEvidence
	n := float64(len(es))
	var nSet, nDelay float64
	for _, e := range es {
		h := e.Host
		m.ServerCPU += h.ServerCPU / n
		m.IRQ += h.IRQ / n
		if h.SetKnown {
			m.SetBusy += h.SetBusy
			m.OtherBusy += h.OtherBusy
			m.SetKnown = true
			nSet++
		}
		if h.RunDelayKnown {
			m.RunDelay += h.RunDelay
			m.RunDelayKnown = true
			nDelay++
		}
		m.Nodes = max(m.Nodes, h.Nodes)
		if m.ServerCPUAbsent == "" {
			m.ServerCPUAbsent = h.ServerCPUAbsent
		}
		if m.Remote == "" {
			m.Remote, m.RemoteNodes = h.Remote, h.RemoteNodes
		}
		if m.Cap.Cores() == 0 {
			m.Cap = h.Cap
		}
	}
	if nSet > 0 {
		m.SetBusy, m.OtherBusy = m.SetBusy/nSet, m.OtherBusy/nSet
	}
	if nDelay > 0 {
		m.RunDelay /= nDelay
	}
	return m
}

// remoteWhy is the reason host verdicts are not judged for servers on another host.
func remoteWhy(ev []Evidence) string {
	for _, e := range ev {
		if e.Host.Remote != "" {
			return "the servers run on another host (" + e.Host.Remote + "): this host's CPU does not describe theirs"
		}
	}
	return ""
}

// nodeHostsCPURead is why busy-host is not judged for servers on other hosts whose hosts'
// CPU their node_exporters gave: an exporter reports its host's CPU, not the server's
// share of it, so other work there is not told apart from the server's. "" when the
// servers are on this host or none of their hosts' CPU was read.
func nodeHostsCPURead(ev []Evidence) string {
	var read []string
	for _, e := range ev {
		for _, m := range machinesOf(e.NodeHosts) {
			if h := m.host; h.CPUBusy != nil && e.Host.Remote != "" && !slices.Contains(read, h.Label()) {
				read = append(read, h.Label())
			}
		}
	}
	if len(read) == 0 {
		return ""
	}
	return "the servers run on other hosts, whose CPU their node_exporters gave (" + strings.Join(read, ", ") +
		") but not how much of it each server used: node_exporter does not count processes, so other work on those hosts cannot be told apart from the servers'; " +
		"the server's own CPU on each host (its processes' or its control group's, as a process exporter or cAdvisor reports it) would tell them apart"
}

// loadGenSaturated judges whether the load generator was short of the CPU it may use: near
// its own cap (affinity, quota), or confined to fewer CPUs than the machine has, those
// saturated, and its threads waiting for them. A generator free to use the whole machine
// is not accused for sharing it with the servers (other work taking the machine is
// busy-host's).
func loadGenSaturated(ev []Evidence, cores int, loadName string) *Verdict {
	for _, e := range ev {
		capCores := e.Host.Cap.Cores()
		capText := e.Host.Cap.String()
		if capCores <= 0 { // not recorded: the share is of the machine
			capCores, capText = float64(cores), fmt.Sprintf("%d CPUs (the machine)", cores)
		}
		if capCores <= 0 {
			continue
		}
		share := e.LoadGenCores / capCores
		servers := ""
		if e.Host.ServerCPUAbsent == "" && e.Host.Remote == "" && e.Host.Nodes > 0 {
			servers = fmt.Sprintf(", the servers %.2f cores", e.Host.ServerCPU)
		}
		if share >= LoadGenAloneShare {
			return &Verdict{Code: VLoadGenSaturated, Message: fmt.Sprintf("at %s the load generator used %.2f cores, %s of the %s it may use%s: it was near its own CPU cap and may have limited the load it offered",
				count(e.Load, loadName), e.LoadGenCores, pct(share), capText, servers)}
		}
		if e.Host.Cap.Confined() && e.Host.SetKnown && e.Host.SetBusy >= CPUSaturatedShare && e.Host.RunDelayKnown && e.Host.RunDelay >= LoadGenWaitLimit {
			return &Verdict{Code: VLoadGenSaturated, Message: fmt.Sprintf("at %s the load generator may use %s, and those were %s busy: it used %.2f cores, and its threads together waited %.2f s per second for a CPU while runnable%s; the machine's other CPUs were %s busy: it was short of CPU in its own set and may have limited the load it offered",
				count(e.Load, loadName), capText, pct(e.Host.SetBusy), e.LoadGenCores, e.Host.RunDelay, servers, pct(e.Host.OtherBusy))}
		}
	}
	return nil
}

// steal judges the hypervisor's steal on this host, or, for servers on other hosts, on
// theirs (from their node_exporters; not judged without them). On a VM, virtio IO shows up as steal
// (the host's work for the guest's IO), so steal during heavy IO is said to be that, with
// the steal of the run's lightest-IO step beside it; steal with little IO is CPU another
// guest or the host took.
func steal(ev []Evidence, loadName string) Verdict {
	onHosts := stealOnNodeHosts(ev, loadName)
	if why := remoteWhy(ev); why != "" {
		unread := stealUnread(ev)
		read := slices.ContainsFunc(ev, func(e Evidence) bool { return len(e.NodeHosts) > 0 })
		switch {
		case onHosts != nil:
			return *onHosts
		case read && unread == "":
			return Verdict{} // every server's own host was judged
		case read:
			why += "; and their own hosts' steal was not read (" + unread + ")"
		}
		return notJudged(VSteal, why)
	}
	if v := stealHere(ev, loadName); v.Code != "" || onHosts == nil {
		return v
	}
	return *onHosts
}

// stealHere judges the hypervisor's steal on this host's CPU.
func stealHere(ev []Evidence, loadName string) Verdict {
	var hit *Evidence
	low := -1
	for i, e := range ev {
		if e.Steal >= StealLimit && hit == nil {
			hit = &ev[i]
		}
		if e.Device.Name != "" && (low < 0 || e.Device.IOPS < ev[low].Device.IOPS) {
			low = i
		}
	}
	if hit == nil {
		return Verdict{}
	}
	e := *hit
	if e.Device.Name != "" && e.Device.IOPS >= StealIOFloorIOPS {
		base := ""
		if low >= 0 && ev[low].Device.IOPS < StealIOFloorIOPS {
			base = fmt.Sprintf(" (at %s, %.0f IOPS, steal was %.1f%%)", count(ev[low].Load, loadName), ev[low].Device.IOPS, 100*ev[low].Steal)
		}
		return Verdict{Code: VSteal, Message: fmt.Sprintf("steal time was %s of CPU at %s while device %s did %.0f IOPS%s: on a VM the host's work for virtio IO shows as steal, so this may be the IO path's cost rather than a noisy neighbour's",
			pct(e.Steal), count(e.Load, loadName), e.Device.Name, e.Device.IOPS, base)}
	}
	if e.Device.Name == "" {
		return Verdict{Code: VSteal, Message: fmt.Sprintf("steal time was %s of CPU at %s; IO was not measured (no device sampled), so the cause is not known: the host's work for virtio IO or another guest",
			pct(e.Steal), count(e.Load, loadName))}
	}
	return Verdict{Code: VSteal, Message: fmt.Sprintf("steal time was %s of CPU at %s with little IO (%.0f IOPS): the hypervisor gave this VM's CPU time to another guest or to the host during the run",
		pct(e.Steal), count(e.Load, loadName), e.Device.IOPS)}
}

// busyHost looks at the lowest load, where the run itself needs least CPU: the machine's
// CPU beyond what the servers used (measured from /proc), the load generator's, interrupts
// and an allowance was other work on the host. It is not judged without the servers' CPU
// measured, or for servers on another host; a storage test has no servers to measure.
func busyHost(ev []Evidence, f Facts, loadName string) *Verdict {
	cores := f.Cores
	if len(ev) == 0 {
		return nil
	}
	low := ev[0]
	for _, e := range ev {
		if e.Load < low.Load {
			low = e
		}
	}
	nj := func(why string) *Verdict { v := notJudged(VBusyHost, why); return &v }
	switch {
	case nodeHostsCPURead(ev) != "":
		return nj(nodeHostsCPURead(ev))
	case remoteWhy(ev) != "":
		return nj(remoteWhy(ev))
	case cores <= 0 || low.CPUAbsent || low.CPUBusy <= 0:
		return nj("this host's CPU was not measured (no OS sampler)")
	case f.Storage: // a storage test: no servers, the tester is the load generator
	case low.Host.Nodes == 0:
		return nj("the servers' CPU was not measured (no database sampler found their processes)")
	case low.Host.ServerCPUAbsent != "":
		return nj("the servers' CPU was not measured from /proc (" + low.Host.ServerCPUAbsent + ")")
	}
	used := (low.CPUBusy - low.Host.IRQ) * float64(cores)
	ours := low.Host.ServerCPU + low.LoadGenCores
	foreign := used - ours - ForeignCPUAllowanceCores
	if foreign < ForeignCPUShare*float64(cores) {
		return nil
	}
	parts := fmt.Sprintf("the load generator %.2f", low.LoadGenCores)
	if low.Host.Nodes > 0 {
		parts = fmt.Sprintf("the servers %.2f, measured from /proc; %s", low.Host.ServerCPU, parts)
	}
	return &Verdict{Code: VBusyHost, Message: fmt.Sprintf("at %s processes used %.2f of the machine's %d cores (CPU %s busy, interrupts left out) but the run accounts for %.2f (%s): other work on the host took about %.2f cores",
		count(low.Load, loadName), used, cores, pct(low.CPUBusy), ours, parts, foreign)}
}

// ForeignCPUThreshold is the foreign CPU (in cores) at which busyHost fires on a machine
// of this many cores: what a test that measures the host by other means compares with.
func ForeignCPUThreshold(cores int) float64 { return ForeignCPUShare * float64(cores) }
