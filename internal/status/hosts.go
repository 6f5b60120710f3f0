package status

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// HostModel is how a cluster models separate hosts on one machine: every node in a control
// group of its own with this budget. Absent from a topology: the nodes share the machine.
type HostModel struct {
	// Kind names the mechanism: "cgroup v1" or "cgroup v2".
	Kind string `json:"kind"`
	// Budget is each node's: CPUs in cores (0: no CPU budget), the CPU weight given with it,
	// memory in bytes, page cache included (0: none), and IO limits (0: none).
	Budget
	// IODevice is the disk the IO limits are on, when there are any.
	IODevice *Device `json:"io_device,omitempty"`
	// MachineCPUs is how many CPUs the machine had when the cluster was made.
	MachineCPUs int `json:"machine_cpus"`
	// Lifted says the budget is lifted for now (SetBudgets): each node still runs in its
	// group, which only counts what it uses, on every CPU, without limits; Budget is what
	// putting the budgets back gives.
	Lifted bool `json:"lifted,omitempty"`
}

// Enforced reports whether the nodes run within budgets now: a host model, not lifted.
func (h *HostModel) Enforced() bool { return h != nil && !h.Lifted }

// String describes the model in one line, as reports show it.
func (h *HostModel) String() string {
	if h == nil {
		return "nodes share one host (no budgets)"
	}
	var parts []string
	if h.CPUs > 0 {
		cpu := strconv.FormatFloat(h.CPUs, 'g', 4, 64) + " cores"
		if h.CPUShares > 0 {
			cpu += fmt.Sprintf(" (weight %d)", h.CPUShares)
		}
		parts = append(parts, cpu)
	}
	if h.Memory > 0 {
		parts = append(parts, FormatMiB(h.Memory)+" memory (page cache included)")
	}
	if io := h.IOString(); io != "" {
		parts = append(parts, io)
	}
	if h.Lifted {
		return fmt.Sprintf("budgets lifted: the nodes share this machine's %d CPUs, memory and page cache, each in a control group that only counts its use (%s; with budgets: %s)",
			h.MachineCPUs, h.Kind, strings.Join(parts, ", "))
	}
	return fmt.Sprintf("each node a modelled host: %s (%s, machine of %d CPUs)", strings.Join(parts, ", "), h.Kind, h.MachineCPUs)
}

// IOString describes the IO limits ("" when there are none): "IO on vda (254:0): reads
// 20 MiB/s, 500 IOPS".
func (h *HostModel) IOString() string {
	if h == nil || !h.HasIO() {
		return ""
	}
	on := "IO"
	if h.IODevice != nil {
		on = "IO on " + h.IODevice.Name + " (" + h.IODevice.String() + ")"
	}
	return on + ": " + IOLimits(h.Budget)
}

// IOLimits lists a budget's IO limits in words: "reads 20 MiB/s, writes 500 IOPS".
func IOLimits(b Budget) string {
	var parts []string
	if l := IOLimit(b.ReadBPS, b.ReadIOPS); l != "" {
		parts = append(parts, "reads "+l)
	}
	if l := IOLimit(b.WriteBPS, b.WriteIOPS); l != "" {
		parts = append(parts, "writes "+l)
	}
	return strings.Join(parts, ", ")
}

// IOLimit writes one direction's limits: "20 MiB/s and 500 IOPS" ("" for none).
func IOLimit(bps, iops int64) string {
	var l []string
	if bps > 0 {
		l = append(l, formatRate(bps))
	}
	if iops > 0 {
		l = append(l, strconv.FormatInt(iops, 10)+" IOPS")
	}
	return strings.Join(l, " and ")
}

func formatRate(bps int64) string {
	if bps%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB/s", bps>>20)
	}
	return fmt.Sprintf("%.1f MiB/s", float64(bps)/(1<<20))
}

// FormatMiB writes a size in MiB, or in GiB when it is whole GiB.
func FormatMiB(n int64) string {
	if n%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB", n>>30)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

// HostUse is a node's modelled host: its budget and what it uses.
type HostUse struct {
	Group     string  `json:"group"`
	CPUs      float64 `json:"cpu_budget,omitempty"`
	CPUSet    string  `json:"cpuset"`
	Memory    int64   `json:"memory_budget_bytes,omitempty"`
	Processes int     `json:"processes"`
	// Over the status's sampling interval:
	Cores          float64  `json:"cpu_cores"`
	ThrottledShare *float64 `json:"throttled_share,omitempty"`
	Used           int64    `json:"memory_bytes"`
	Cache          int64    `json:"page_cache_bytes"`
	// IO is the node's IO budget (limits) and IOUse its IO per second over the interval,
	// when the host limits IO.
	IO    *Budget  `json:"io_budget,omitempty"`
	IOUse *IORates `json:"io_use,omitempty"`
	// Neighbours are agbench's other control groups (other clusters') pinned to any of this
	// node's CPUs: the node shares those CPUs with them.
	Neighbours []string `json:"cpu_neighbours,omitempty"`
	Error      string   `json:"error,omitempty"`
}

// IORates is IO per second on the host's disk.
type IORates struct {
	ReadBPS   float64 `json:"read_bytes_per_second"`
	WriteBPS  float64 `json:"write_bytes_per_second"`
	ReadIOPS  float64 `json:"read_iops"`
	WriteIOPS float64 `json:"write_iops"`
}

// HostUseInterval is how long status watches the groups to tell their CPU and IO use.
const HostUseInterval = 500 * time.Millisecond
