package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/agbench/agbench/internal/status"
	"github.com/agbench/agbench/internal/table"
	"github.com/agbench/agbench/internal/units"
)

// clusterHosts shows each node's modelled host: budget and use over status's sampling
// interval.
func clusterHosts(w io.Writer, st *status.Cluster) {
	if st.Hosts == nil {
		fmt.Fprintln(w, "hosts: the nodes share this machine's CPUs, memory and page cache (no budgets)")
		return
	}
	fmt.Fprintf(w, "\nhosts: %s\n", st.Hosts)
	tw := table.NewWriter(w, table.Left)
	fmt.Fprintln(tw, "NODE\tGROUP\tCPU IDS\tCPU BUDGET\tCPU USE\tTHROTTLED\tMEMORY BUDGET\tMEMORY USE\tPAGE CACHE\tPROCESSES")
	for _, n := range st.Nodes {
		hostRow(tw, n.Name, n.Budget)
	}
	tw.Flush()
	clusterHostIO(w, st)
	for _, n := range st.Nodes {
		if h := n.Budget; h != nil && len(h.Neighbours) > 0 {
			fmt.Fprintf(w, "%s shares CPU(s) %s with other clusters' nodes: %s\n", n.Name, h.CPUSet, strings.Join(h.Neighbours, ", "))
		}
	}
}

// hostRow is one node's row of the hosts table.
func hostRow(tw io.Writer, name string, h *status.HostUse) {
	if h == nil {
		fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\n", name)
		return
	}
	cpuBudget, memBudget := "none", "none"
	if h.CPUs > 0 {
		cpuBudget = fmt.Sprintf("%g cores", h.CPUs)
	}
	if h.Memory > 0 {
		memBudget = units.FormatBytes(h.Memory)
	}
	if h.Error != "" {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t- (%s)\t-\t%s\t-\t-\t-\n", name, h.Group, h.CPUSet, cpuBudget, h.Error, memBudget)
		return
	}
	use := fmt.Sprintf("%.2f cores", h.Cores)
	if h.CPUs > 0 {
		use += fmt.Sprintf(" (%.0f%%)", 100*h.Cores/h.CPUs)
	}
	thr := "-"
	if h.ThrottledShare != nil {
		thr = fmt.Sprintf("%.0f%% of periods", 100**h.ThrottledShare)
	}
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", name, h.Group, h.CPUSet, cpuBudget, use, thr, memBudget,
		units.FormatBytes(h.Used), units.FormatBytes(h.Cache), h.Processes)
}

// clusterHostIO shows each node's IO budget on its disk and its IO over status's interval.
func clusterHostIO(w io.Writer, st *status.Cluster) {
	if !st.Hosts.HasIO() || st.Hosts.Lifted {
		return
	}
	fmt.Fprintf(w, "\nIO budget per node on %s (%s); use over %v\n", st.Hosts.IODevice.Name, st.Hosts.IODevice, status.HostUseInterval)
	tw := table.NewWriter(w, table.Left)
	fmt.Fprintln(tw, "NODE\tREAD BUDGET\tREAD USE\tWRITE BUDGET\tWRITE USE")
	for _, n := range st.Nodes {
		h := n.Budget
		if h == nil || h.IO == nil {
			continue
		}
		var u status.IORates
		if h.IOUse != nil {
			u = *h.IOUse
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", n.Name, dash(status.IOLimit(h.IO.ReadBPS, h.IO.ReadIOPS)), ioUse(h, u.ReadBPS, u.ReadIOPS, h.IO.ReadBPS, h.IO.ReadIOPS),
			dash(status.IOLimit(h.IO.WriteBPS, h.IO.WriteIOPS)), ioUse(h, u.WriteBPS, u.WriteIOPS, h.IO.WriteBPS, h.IO.WriteIOPS))
	}
	tw.Flush()
	if st.Hosts.Kind == "cgroup v1" {
		fmt.Fprintln(w, "note:", status.V1WriteNote)
	}
}

// ioUse is one direction's IO over the interval, with its share of each budget.
func ioUse(h *status.HostUse, bps, iops float64, bbud, ibud int64) string {
	if h.IOUse == nil {
		return "-"
	}
	s := fmt.Sprintf("%s/s, %.0f IOPS", units.FormatBytes(int64(bps)), iops)
	var of []string
	if bbud > 0 {
		of = append(of, fmt.Sprintf("%.0f%% of bytes", 100*bps/float64(bbud)))
	}
	if ibud > 0 {
		of = append(of, fmt.Sprintf("%.0f%% of IOPS", 100*iops/float64(ibud)))
	}
	if len(of) > 0 {
		s += " (" + strings.Join(of, ", ") + ")"
	}
	return s
}
