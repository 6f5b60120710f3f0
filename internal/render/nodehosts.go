package render

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/table"
	"github.com/agbench/agbench/internal/units"
)

// NodeHostColumns head the nodes' hosts table (after the step's variant and load): each
// node's own host as its node_exporter saw it over the step's window.
var NodeHostColumns = []string{"node", "CPU busy", "iowait", "steal", "CPU waiting", "run queue at scrape", "CPUs", "mem available", "device", "IOPS", "util", "net rx MB/s", "net tx MB/s", "net err/s"}

// HostCell is one cell of the nodes' hosts table: its text ("–" when the figure was not
// read) and the number behind it (nil when absent, or not a number).
type HostCell struct {
	Text  string
	Value *float64
}

// NodeHostRow is one node's host at one step; Shared is the machine it is on when other
// nodes' exporters describe that machine too (nil when none do).
type NodeHostRow struct {
	Step   *result.Step
	Host   analyze.NodeHost
	Cells  []HostCell
	Shared *analyze.SharedHost
}

// NodeHostRows are the rows of the nodes' hosts table, step by step in the order they
// ran; none when no step read a node's host.
func NodeHostRows(steps []result.Step) ([]NodeHostRow, error) {
	var out []NodeHostRow
	for i := range steps {
		st := &steps[i]
		hs, err := analyze.NodeHostsOf(st)
		if err != nil {
			return nil, err
		}
		shared := analyze.SharedHostsAmong(hs)
		for _, h := range hs {
			row := NodeHostRow{Step: st, Host: h, Cells: nodeHostCells(h)}
			if i := slices.IndexFunc(shared, func(s analyze.SharedHost) bool { return slices.Contains(s.Nodes, h.Node) }); i >= 0 {
				row.Shared = &shared[i]
			}
			out = append(out, row)
		}
	}
	return out, nil
}

// RunQueueNote says, under a table that shows an exporter's run queue, what it is and what
// the CPU waiting beside it is: the exporter's own threads run at the instant of its scrape.
const RunQueueNote = "run queue at scrape: node_procs_running at the instant of each scrape, the exporter's own threads among them; " +
	"CPU waiting: the share of the window some task waited for a CPU (PSI), what tells a host short of CPU where it was read"

// nodeHostCells are a host's figures as the table shows them, in NodeHostColumns' order.
func nodeHostCells(h analyze.NodeHost) []HostCell {
	name := h.Node
	if h.Role != "" && h.Role != h.Node {
		name += " (" + h.Role + ")"
	}
	share := func(p *float64) HostCell {
		return optCell(p, func(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) }, 1)
	}
	mbps := func(p *float64) HostCell {
		return optCell(p, func(v float64) string { return fmt.Sprintf("%.2f", v/1e6) }, 1e-6)
	}
	cells := []HostCell{{Text: name}, share(h.CPUBusy), share(h.IOWait), share(h.Steal), share(h.CPUPressure),
		optCell(h.RunQueue, func(v float64) string { return fmt.Sprintf("%.1f", v) }, 1),
		optCell(h.CPUs, func(v float64) string { return fmt.Sprintf("%g", v) }, 1),
		optCell(h.MemAvailable, func(v float64) string { return units.FormatBytes(int64(v)) }, 1)}
	if d := h.Device; d != nil {
		iops, util := d.IOPS, d.Util
		cells = append(cells, HostCell{Text: d.Name}, HostCell{Text: fmt.Sprintf("%.0f", iops), Value: &iops}, share(&util))
	} else {
		cells = append(cells, HostCell{Text: table.Absent}, HostCell{Text: table.Absent}, HostCell{Text: table.Absent})
	}
	return append(cells, mbps(h.NetRxBPS), mbps(h.NetTxBPS), optCell(h.NetErrors, func(v float64) string { return fmt.Sprintf("%.1f", v) }, 1))
}

// optCell shows a figure that may be absent: "–" when it is, else its text, with the
// number behind it scaled as the text shows it.
func optCell(p *float64, text func(float64) string, scale float64) HostCell {
	if p == nil {
		return HostCell{Text: table.Absent}
	}
	v := *p * scale
	return HostCell{Text: text(*p), Value: &v}
}

// nodeHostFigures are the figures a row shows, by their names after "host.<node>.", with
// the words a note names them by.
var nodeHostFigures = []struct{ name, words string }{
	{result.HostCPUBusy, "CPU busy"}, {result.HostCPUIOWait, "iowait"}, {result.HostCPUSteal, "steal"}, {result.HostCPUPressure, "CPU waiting"},
	{result.HostRunQueue, "run queue"}, {result.HostCPUs, "CPUs"}, {result.HostMemAvailable, "memory available"},
	{result.HostNetRxBPS, "network received"}, {result.HostNetTxBPS, "network sent"}, {result.HostNetErrors, "network errors"},
}

// NodeHostAbsences says why the figures a host's row shows as "–" are absent: the whole
// host's reason, or each figure's ("pg1's host: run queue: the exporter did not report …").
func NodeHostAbsences(h analyze.NodeHost) []string {
	if !h.Measured() {
		return []string{h.Label() + ": " + h.Why("")}
	}
	byWhy := map[string][]string{}
	var order []string
	for _, f := range nodeHostFigures {
		if _, ok := h.Figure(f.name); ok {
			continue
		}
		why := h.Why(f.name)
		if byWhy[why] == nil {
			order = append(order, why)
		}
		byWhy[why] = append(byWhy[why], f.words)
	}
	if h.Device == nil {
		why := "no device figure recorded"
		byWhy[why] = append(byWhy[why], "devices")
		order = append(order, why)
	}
	var out []string
	for _, why := range order {
		out = append(out, h.Label()+": "+strings.Join(byWhy[why], ", ")+": "+why)
	}
	return out
}

// NodeHosts prints each node's own host at each step, as its node_exporter saw it, with
// why the figures shown "–" are absent; nothing when no step read a node's host. A step is
// told by its load (loadName: "threads", "VUs").
func NodeHosts(w io.Writer, steps []result.Step, loadName string) {
	NodeHostsBy(w, steps, loadName, func(st *result.Step) string { return fmt.Sprint(st.Concurrency()) })
}

// NodeHostsBy is NodeHosts with each step told by key, under the header head (a drill's
// cycle).
func NodeHostsBy(w io.Writer, steps []result.Step, head string, key func(*result.Step) string) {
	rows, err := NodeHostRows(steps)
	if err != nil {
		fmt.Fprintf(w, "\nnodes' hosts: %v\n", err)
		return
	}
	if len(rows) == 0 {
		return
	}
	variants := false
	for _, row := range rows {
		variants = variants || row.Step.Variant != ""
	}
	through, where := NodeHostSources(rows)
	fmt.Fprintf(w, "\n%s:\n", NodeHostsTitle(through))
	tw := table.NewWriter(w, table.Left)
	cols := append([]string{head}, NodeHostColumns...)
	if variants {
		cols = append([]string{"variant"}, cols...)
	}
	tw.Row(cols...)
	var notes []string
	for _, row := range rows {
		if row.Host.RunQueue != nil && !slices.Contains(notes, RunQueueNote) {
			notes = append(notes, RunQueueNote)
		}
		cells := []string{key(row.Step)}
		if variants {
			cells = append([]string{row.Step.Variant}, cells...)
		}
		for _, c := range row.Cells {
			cells = append(cells, c.Text)
		}
		tw.Row(cells...)
		for _, n := range NodeHostAbsences(row.Host) {
			if !slices.Contains(notes, n) {
				notes = append(notes, n)
			}
		}
	}
	for _, row := range rows {
		if n := NodeHostSpan(row); n != "" {
			notes = append(notes, fmt.Sprintf("%s (%s %s): %s", row.Host.Label(), head, key(row.Step), n))
		}
	}
	notes = append(notes, NodeHostMachines(rows)...)
	_ = tw.Flush()
	if len(where) > 0 {
		fmt.Fprintln(w, "– read: "+strings.Join(where, ", "))
	}
	for _, n := range notes {
		fmt.Fprintln(w, "– "+n)
	}
}

// SpanNoted is how far outside the window (seconds, on either side) the readings a host's
// figures are made of may lie before a note says so: a direct read at the open or close
// takes milliseconds; a Prometheus server's scrapes lie up to an interval outside.
const SpanNoted = 0.25

// NodeHostSpan says, of a host whose figures are made of readings that lie notably outside
// its step's window (a Prometheus server's scrapes nearest the open and the close), how
// far: "its figures are of readings from 0.6 s before the window's open to 0.9 s after its
// close (a window of 4.0 s)" — means over that longer span, not the window's own. "" when
// they lie within SpanNoted of it, or the span was not recorded.
func NodeHostSpan(row NodeHostRow) string {
	h := row.Host
	if h.ReadBefore == nil || h.ReadAfter == nil || (*h.ReadBefore <= SpanNoted && *h.ReadAfter <= SpanNoted) {
		return ""
	}
	edge := func(s float64, outside, inside string) string {
		if s >= 0 {
			return fmt.Sprintf("%.1f s %s", s, outside)
		}
		return fmt.Sprintf("%.1f s %s", -s, inside)
	}
	return fmt.Sprintf("its figures are of readings from %s the window's open to %s its close (a window of %.1f s)",
		edge(*h.ReadBefore, "before", "after"), edge(*h.ReadAfter, "after", "before"), row.Step.Window.Seconds())
}

// NodeHostMachines says which nodes' exporters describe one machine, and, of each node with
// a budget of its own, that its exporter reads the machine rather than the budget: one
// sentence each, in the rows' order.
func NodeHostMachines(rows []NodeHostRow) []string {
	var out []string
	for _, r := range rows {
		for _, n := range []string{sharedSentence(r.Shared), r.Host.BudgetNote()} {
			if n != "" && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// NodeHostMachine says, of one row, which other nodes are on its machine and what its
// budget is not: "one host with standby1 and standby2 (boot 2026-11-28 05:15:29 UTC)"; ""
// when neither applies.
func NodeHostMachine(r NodeHostRow) string {
	var parts []string
	if s := r.Shared; s != nil {
		parts = append(parts, "one host with "+s.Others(r.Host.Node)+" ("+s.Boot()+")")
	}
	if n := r.Host.BudgetNote(); n != "" {
		parts = append(parts, n)
	}
	return strings.Join(parts, "; ")
}

func sharedSentence(s *analyze.SharedHost) string {
	if s == nil {
		return ""
	}
	return s.Sentence()
}

// NodeHostsTitle heads the nodes' hosts table, with the Prometheus server their figures
// were read through when all were read through one (through, from NodeHostSources).
func NodeHostsTitle(through string) string {
	if through != "" {
		return "nodes' hosts (their node_exporters, through the Prometheus server " + through + "), per step"
	}
	return "nodes' hosts (their node_exporters), per step"
}

// NodeHostSources says where each node's host figures were read, as the sampler recorded
// it: through is the Prometheus server's URL when every node's were read through the same
// one (each then names the node's series, "pg1 instance=\"10.0.0.5:9100\""), else ""
// (each then names the exporter, "pg1 from http://10.0.0.5:9100/metrics"). One entry
// per node, in the rows' order; none when no source was recorded.
func NodeHostSources(rows []NodeHostRow) (through string, each []string) {
	var nodes []string
	src := map[string]string{}
	for _, r := range rows {
		if r.Host.Source == "" || src[r.Host.Node] != "" {
			continue
		}
		nodes = append(nodes, r.Host.Node)
		src[r.Host.Node] = r.Host.Source
	}
	for i, n := range nodes {
		server, series, _ := strings.Cut(src[n], " ") // a Prometheus server's source is its URL and the series' label
		if series == "" || (i > 0 && server != through) {
			through = ""
			break
		}
		through = server
	}
	for _, n := range nodes {
		if through != "" {
			each = append(each, n+" "+strings.TrimPrefix(src[n], through+" "))
			continue
		}
		each = append(each, n+" from "+src[n])
	}
	return through, each
}

// NodeHostSource says where one node's host figures were read, under through (from
// NodeHostSources): its series' label when through is the server, else its source.
func NodeHostSource(h analyze.NodeHost, through string) string {
	if series, ok := strings.CutPrefix(h.Source, through+" "); ok && through != "" {
		return series
	}
	return cmp.Or(h.Source, table.Absent)
}
