package analyze

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/units"
)

// A node's own host, read from the Prometheus node_exporter on it (directly or through a
// Prometheus server): the host.<node>.* figures of CPU by mode, run queue, memory, devices
// and network. They are judged by the rules this machine's figures get, host by host,
// whichever way they were read; a host whose figures are absent is not judged, with the
// reason the sampler recorded (result.HostsStep).

// Node host thresholds (CPUSaturatedShare, DeviceSaturatedUtil, DeviceQueueGrowth and
// StealLimit apply to them as to this machine).
const (
	// HostRunQueuePerCPU is the run queue (runnable tasks, procs_running) per CPU from
	// which a host busy at CPUSaturatedShare counts as short of CPU: tasks waited for one.
	// It is the fallback where CPU pressure was not read: node_procs_running is an instant
	// at each scrape, and at that instant the exporter's own collector threads run (several
	// exporters of one machine at once on a --netns cluster), so it reads high (about twice
	// /proc/stat's mean over a window, measured).
	HostRunQueuePerCPU = 1.0
	// HostCPUPressureShare is the share of a window in which some runnable task of the host
	// waited for a CPU (PSI's cpu "some") from which a host busy at CPUSaturatedShare counts
	// as short of CPU: tasks queued for a CPU for most of the window, not in a burst. A
	// counter over the whole window, it is preferred to the run queue where it was read.
	HostCPUPressureShare = 0.5
	// HostIOWaitShare is the share of a host's CPU time in iowait that names its storage
	// when no device figure of the host was read.
	HostIOWaitShare = 0.30
	// HostNetErrorsPerSec is the network errors and drops per second of a host that are
	// noted beside what saturated, when more than at the lowest load.
	HostNetErrorsPerSec = 1.0
)

// NodeHost is what a node's host said of itself over a window (means over it). A figure
// not read is nil: Absent says why none was (every read failed), Missing why one was not.
type NodeHost struct {
	Node string `json:"node"`
	// Role is "primary" or "standby" when the database sampler watched the node.
	Role    string            `json:"role,omitempty"`
	Source  string            `json:"source,omitempty"`
	Absent  string            `json:"absent,omitempty"`
	Missing map[string]string `json:"missing,omitempty"`
	CPUs    *float64          `json:"cpus,omitempty"`
	// CPUBusy, IOWait and Steal are shares (0..1) of the host's CPU time.
	CPUBusy  *float64 `json:"cpu_busy,omitempty"`
	IOWait   *float64 `json:"cpu_iowait,omitempty"`
	Steal    *float64 `json:"cpu_steal,omitempty"`
	RunQueue *float64 `json:"run_queue,omitempty"`
	// CPUPressure is the share of the window some runnable task waited for a CPU (PSI).
	CPUPressure  *float64 `json:"cpu_pressure_some,omitempty"`
	MemTotal     *float64 `json:"mem_total_bytes,omitempty"`
	MemAvailable *float64 `json:"mem_available_bytes,omitempty"`
	PageCache    *float64 `json:"page_cache_bytes,omitempty"`
	// Device is the host's busiest device (by utilisation, then IOPS); nil when none was read.
	Device    *Device  `json:"device,omitempty"`
	NetRxBPS  *float64 `json:"net_rx_bytes_per_s,omitempty"`
	NetTxBPS  *float64 `json:"net_tx_bytes_per_s,omitempty"`
	NetErrors *float64 `json:"net_errors_per_s,omitempty"`
	// BootTime is when the host booted (node_boot_time_seconds, Unix seconds): with its CPUs
	// and memory, what tells one machine from another (onehost.go).
	BootTime *float64 `json:"boot_time_s,omitempty"`
	// Nodename and Machine are the machine's name and architecture (node_uname_info), when
	// its exporter reported them: exporters of one machine report the same.
	Nodename string `json:"nodename,omitempty"`
	Machine  string `json:"machine,omitempty"`
	// Devices are the devices the exporter reported, by name: exporters of one machine that
	// report the same ones describe its devices alike.
	Devices []string `json:"devices,omitempty"`
	// ExpectedMBps is the IO the node's server accounts for (pg_stat_io and WAL, 16+); 0
	// when unknown.
	ExpectedMBps float64 `json:"expected_mbps,omitempty"`
	// BudgetCores and BudgetMemory are the node's own budget (its control group's, as
	// cluster create's host budgets make it) in cores and bytes; 0 when it has none. Its
	// exporter reads the machine, not the budget.
	BudgetCores  float64 `json:"budget_cores,omitempty"`
	BudgetMemory float64 `json:"budget_memory_bytes,omitempty"`
	// ReadBefore and ReadAfter are how far the readings the figures are made of lie outside
	// the window, in seconds before its open and after its close (negative: inside it):
	// about 0 for an exporter read directly, up to a scrape interval each through a
	// Prometheus server. Nil when the readings' span was not recorded.
	ReadBefore *float64 `json:"read_before_s,omitempty"`
	ReadAfter  *float64 `json:"read_after_s,omitempty"`

	label string // the machine's name, when the host is several nodes' one machine
}

// Measured tells whether any figure of the host was read.
func (h NodeHost) Measured() bool {
	for _, p := range h.figures() {
		if *p.v != nil {
			return true
		}
	}
	return h.Device != nil
}

// Why is why a figure of the host (its name after "host.<node>.") is absent.
func (h NodeHost) Why(figure string) string {
	return cmp.Or(result.HostSource{Absent: h.Absent, Missing: h.Missing}.Why(figure), "not recorded in this result")
}

// Label names the host in sentences: "the primary's host (pg1)", "the primary's host"
// when the node's name is its role, "pg1's host" when its role is not known.
func (h NodeHost) Label() string {
	if h.label != "" {
		return h.label
	}
	switch h.Role {
	case "":
		return h.Node + "'s host"
	case h.Node:
		return "the " + h.Role + "'s host"
	}
	return "the " + h.Role + "'s host (" + h.Node + ")"
}

// nodeHostFigure is one figure of NodeHost with its name after "host.<node>.".
type nodeHostFigure struct {
	name string
	v    **float64
}

func (h *NodeHost) figures() []nodeHostFigure {
	return []nodeHostFigure{{result.HostCPUs, &h.CPUs}, {result.HostCPUBusy, &h.CPUBusy}, {result.HostCPUIOWait, &h.IOWait},
		{result.HostCPUSteal, &h.Steal}, {result.HostRunQueue, &h.RunQueue}, {result.HostCPUPressure, &h.CPUPressure}, {result.HostMemTotal, &h.MemTotal},
		{result.HostMemAvailable, &h.MemAvailable}, {result.HostMemPageCache, &h.PageCache}, {result.HostNetRxBPS, &h.NetRxBPS},
		{result.HostNetTxBPS, &h.NetTxBPS}, {result.HostNetErrors, &h.NetErrors}, {result.HostBootTime, &h.BootTime}}
}

// exporterFigures are the figures only a node_exporter gives: a node with one of them (or
// a device's) was read from its host's exporter.
var exporterFigures = map[string]bool{result.HostCPUs: true, result.HostCPUBusy: true, result.HostCPUIOWait: true,
	result.HostCPUSteal: true, result.HostRunQueue: true, result.HostCPUPressure: true, result.HostMemTotal: true, result.HostMemAvailable: true,
	result.HostMemPageCache: true, result.HostNetRxBPS: true, result.HostNetTxBPS: true, result.HostNetErrors: true,
	result.HostScrapeOffsetS: true, result.HostBootTime: true}

// isExporterName tells the names of figures a node_exporter gives.
func isExporterName(name string) bool {
	if _, _, _, ok := result.ParseHostDiskName(name); ok {
		return true
	}
	_, fig, ok := result.ParseHostName(name)
	return ok && exporterFigures[fig]
}

// nodeHostsOf reads the nodes' hosts of one step: its exporter figures (c, with the
// series' window means) and the host section's sources and reasons; the node's role from
// the database sampler's section.
func nodeHostsOf(st *result.Step, c map[string]float64) ([]NodeHost, error) {
	sec, err := st.Hosts()
	if err != nil {
		return nil, err
	}
	by := map[string]*NodeHost{}
	get := func(node string) *NodeHost {
		if by[node] == nil {
			by[node] = &NodeHost{Node: node}
		}
		return by[node]
	}
	for k := range c {
		if node, _, ok := result.ParseHostName(k); ok && isExporterName(k) {
			get(node)
		}
	}
	if sec != nil {
		for name, src := range sec.Nodes {
			h := get(result.SeriesNodeName(name))
			h.Source, h.Absent, h.Missing = src.Source, src.Absent, src.Missing
			h.Nodename, h.Machine = src.Nodename, src.Machine
			if sp := src.Span; sp != nil && !st.Window.Start.IsZero() && !st.Window.End.IsZero() {
				before, after := st.Window.Start.Sub(sp.Start).Seconds(), sp.End.Sub(st.Window.End).Seconds()
				h.ReadBefore, h.ReadAfter = &before, &after
			}
		}
	}
	if len(by) == 0 {
		return nil, nil
	}
	roles, err := rolesOf(st)
	if err != nil {
		return nil, err
	}
	out := make([]NodeHost, 0, len(by))
	for _, node := range slices.Sorted(maps.Keys(by)) {
		h := by[node]
		h.Role = roles[node]
		if h.Absent != "" { // its sampler found no window figures: points of a part of it are no mean of it
			out = append(out, *h)
			continue
		}
		for _, f := range h.figures() {
			if v, ok := c[result.HostName(node, f.name)]; ok && h.Missing[f.name] == "" {
				*f.v = &v
			}
		}
		h.Device, h.Devices = hostDeviceOf(c, node, h.Missing)
		h.ExpectedMBps = pgIOMBps(pgFiguresOf(c, node))
		h.BudgetCores, h.BudgetMemory = c[result.HostName(node, result.HostCPUBudget)], c[result.HostName(node, result.HostMemoryBudget)]
		out = append(out, *h)
	}
	return out, nil
}

// rolesOf names each node the database sampler watched by its role, keyed as in series names.
func rolesOf(st *result.Step) (map[string]string, error) {
	x, err := st.Sample()
	if x == nil || err != nil {
		return nil, err
	}
	roles := map[string]string{}
	for name, n := range x.Nodes {
		role := "primary"
		if n.Info.InRecovery {
			role = "standby"
		}
		roles[result.SeriesNodeName(name)] = role
	}
	return roles, nil
}

// pgFiguresOf keeps the database sampler's figures of one node.
func pgFiguresOf(c map[string]float64, node string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range c {
		if n, _, ok := result.ParsePGName(k); ok && n == node {
			out[k] = v
		}
	}
	return out
}

// hostDeviceOf is the node's host's busiest device: by utilisation, then IOPS, then name;
// and the names of every device it reported, sorted. A device whose utilisation its
// sampler says is absent from the window (missing, by its name after "host.<node>.") is
// left out of the busiest.
func hostDeviceOf(c map[string]float64, node string, missing map[string]string) (*Device, []string) {
	var best *Device
	var names []string
	for k := range c {
		n, dev, fig, ok := result.ParseHostDiskName(k)
		if !ok || n != node || fig != result.DiskUtil {
			continue
		}
		names = append(names, dev)
		if _, rest, _ := result.ParseHostName(k); missing[rest] != "" {
			continue
		}
		v := func(f string) float64 { return c[result.HostDiskName(node, dev, f)] }
		d := Device{Name: dev, IOPS: v(result.DiskIOPS), ReadMBps: v(result.DiskReadMBps), WriteMBps: v(result.DiskWriteMBps),
			AwaitMs: v(result.DiskAwaitMs), Queue: v(result.DiskQueue), Util: v(result.DiskUtil)}
		if best == nil || busier(d, *best) {
			best = &d
		}
	}
	slices.Sort(names)
	return best, names
}

// busier orders devices by utilisation, then IOPS, then name.
func busier(a, b Device) bool {
	if a.Util != b.Util {
		return a.Util > b.Util
	}
	if a.IOPS != b.IOPS {
		return a.IOPS > b.IOPS
	}
	return a.Name < b.Name
}

// meanNodeHosts averages the nodes' hosts over windows, node by node: each figure over the
// windows that read it (a window that did not is absent, not 0), the busiest device of the
// means, and the first reason given for an absence.
func meanNodeHosts(es []Evidence) []NodeHost {
	type acc struct {
		h    NodeHost
		sum  map[string]float64
		n    map[string]float64
		devs map[string][]Device
	}
	by := map[string]*acc{}
	for _, e := range es {
		for _, h := range e.NodeHosts {
			a := by[h.Node]
			if a == nil {
				a = &acc{h: NodeHost{Node: h.Node}, sum: map[string]float64{}, n: map[string]float64{}, devs: map[string][]Device{}}
				by[h.Node] = a
			}
			a.h.Role = cmp.Or(a.h.Role, h.Role)
			a.h.Source = cmp.Or(a.h.Source, h.Source)
			a.h.Nodename, a.h.Machine = cmp.Or(a.h.Nodename, h.Nodename), cmp.Or(a.h.Machine, h.Machine)
			a.h.Absent = cmp.Or(a.h.Absent, h.Absent)
			a.h.BudgetCores, a.h.BudgetMemory = cmp.Or(a.h.BudgetCores, h.BudgetCores), cmp.Or(a.h.BudgetMemory, h.BudgetMemory)
			if a.h.Missing == nil && len(h.Missing) > 0 {
				a.h.Missing = h.Missing
			}
			for _, f := range h.figures() {
				if *f.v != nil {
					a.sum[f.name] += **f.v
					a.n[f.name]++
				}
			}
			a.sum["expected"] += h.ExpectedMBps / float64(len(es))
			if h.Device != nil {
				a.devs[h.Device.Name] = append(a.devs[h.Device.Name], *h.Device)
			}
			for _, d := range h.Devices {
				if !slices.Contains(a.h.Devices, d) {
					a.h.Devices = append(a.h.Devices, d)
				}
			}
		}
	}
	out := make([]NodeHost, 0, len(by))
	for _, node := range slices.Sorted(maps.Keys(by)) {
		a := by[node]
		h := a.h
		for _, f := range h.figures() {
			if n := a.n[f.name]; n > 0 {
				v := a.sum[f.name] / n
				*f.v = &v
			}
		}
		h.ExpectedMBps = a.sum["expected"]
		slices.Sort(h.Devices)
		for _, name := range slices.Sorted(maps.Keys(a.devs)) {
			d := meanDevice(a.devs[name])
			if h.Device == nil || busier(d, *h.Device) {
				h.Device = &d
			}
		}
		out = append(out, h)
	}
	return out
}

// meanDevice averages one device's figures over windows.
func meanDevice(ds []Device) Device {
	m := Device{Name: ds[0].Name}
	n := float64(len(ds))
	for _, d := range ds {
		m.IOPS += d.IOPS / n
		m.ReadMBps += d.ReadMBps / n
		m.WriteMBps += d.WriteMBps / n
		m.AwaitMs += d.AwaitMs / n
		m.Queue += d.Queue / n
		m.Util += d.Util / n
	}
	return m
}

// nodeHostAt is the node's host in a window's evidence, if it was there.
func nodeHostAt(e Evidence, node string) (NodeHost, bool) {
	for _, h := range e.NodeHosts {
		if h.Node == node {
			return h, true
		}
	}
	return NodeHost{}, false
}

// NodeHostsOf reads the nodes' hosts of one step of a result as the analysis reads them
// (figures kept as series or counters, sources and reasons from the host section), for
// the tables that show each host per step; none when the step has no host figures.
func NodeHostsOf(st *result.Step) ([]NodeHost, error) {
	return nodeHostsOf(st, withSeriesMeans(*st))
}

// BudgetNote says, of a node with a CPU or memory budget of its own (a control group), that
// its exporter's CPU and memory are the machine's, not the budget's: "primary's exporter
// reads the machine's CPU and memory, not its budget's (0.6 cores, 1.0 GiB): its control
// group's figures are the budget's". "" when it has no budget.
func (h NodeHost) BudgetNote() string {
	var b []string
	if h.BudgetCores > 0 {
		b = append(b, fmtNum(h.BudgetCores)+" cores")
	}
	if h.BudgetMemory > 0 {
		b = append(b, units.FormatBytes(int64(h.BudgetMemory)))
	}
	if len(b) == 0 {
		return ""
	}
	return h.Node + "'s exporter reads the machine's CPU and memory, not its budget's (" + strings.Join(b, ", ") + "): its control group's figures are the budget's"
}

// Figure is one figure of the host by its name after "host.<node>." (result.HostCPUBusy
// ...): false when it was not read.
func (h NodeHost) Figure(name string) (float64, bool) {
	for _, f := range h.figures() {
		if f.name == name && *f.v != nil {
			return **f.v, true
		}
	}
	return 0, false
}

// IsNodeHostName tells the names of the figures a node's host gives through its
// node_exporter ("host.<node>.cpu_busy", "host.<node>.disk.<device>.util" ...) from those
// of a modelled host (its control group), which share the "host." prefix.
func IsNodeHostName(name string) bool { return isExporterName(name) }
