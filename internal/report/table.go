package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/table"
	"github.com/agbench/agbench/internal/units"
)

// Table is one table of the report, rendered the same in the terminal, the HTML and CSV.
type Table struct {
	// Name is the table's file name in a CSV export ("stress-main"); Title its caption.
	Name, Title string
	// Groups span columns over a header row (the articles' "SQL AG" | "SQL AG with ROR");
	// empty when the table has none.
	Groups  []Group
	Columns []string
	Rows    [][]Cell
	// Open shows the table unfolded in the HTML report (the first table always is).
	Open bool
}

// Group is a header spanning Span columns: the terminal table's own.
type Group = table.Group

// Cell is one value of a table: text as shown, and the number behind it for CSV.
type Cell struct {
	Text  string
	Value float64
	Num   bool
}

func txt(s string) Cell   { return Cell{Text: s} }
func num(v float64) Cell  { return Cell{Text: fmtNum(v), Value: v, Num: true} }
func numMs(us int64) Cell { return num(ms(us)) }
func blank() Cell         { return Cell{Text: "-"} }
func intc(v int64) Cell {
	return Cell{Text: units.GroupInt(v), Value: float64(v), Num: true}
}
func (t *Table) add(c ...Cell) { t.Rows = append(t.Rows, c) }

// counterLabel is a counter's column header ("mb_per_s" -> "MB/s").
func counterLabel(c string) string {
	switch c {
	case "nopm":
		return "NOPM"
	case "tpm":
		return "TPM"
	case "iops":
		return "IOPS"
	}
	if c == result.ServerMBps {
		return "MB/s"
	}
	s := strings.ReplaceAll(c, "mb_per_s", "MB/s")
	s = strings.ReplaceAll(s, "_per_s", "/s")
	s = strings.ReplaceAll(s, "iops", "IOPS")
	return strings.ReplaceAll(s, "_", " ")
}

// headline returns the experiment's counters that belong in its main table.
func (e *Experiment) headline() []string {
	var out []string
	for _, c := range e.Counters {
		for _, h := range headlineCounters {
			if c == h && e.nonZero(c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// nonZero is true when some step has the counter above zero (a write-IOPS column of a
// read-only test says nothing).
func (e *Experiment) nonZero(counter string) bool {
	for _, v := range e.Variants {
		for _, c := range v.Cells {
			if c != nil && c.Counters[counter] != 0 {
				return true
			}
		}
	}
	return false
}

func (e *Experiment) slug() string {
	t := e.Title
	if t == "" {
		t = e.Command
	}
	s := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(t))
	for strings.Contains(s, "--") {
		s = strings.ReplaceAll(s, "--", "-")
	}
	return strings.Trim(s, "-")
}

func (e *Experiment) pointHeader() string {
	if e.Sweep {
		return e.LoadName
	}
	return "step"
}

// Tables returns the experiment's tables: a workload's own article table (seed, readahead)
// when the results carry it, the articles' throughput table, where sessions landed (for
// workloads that route), the failed operations and lost sessions (when any), then latency per
// operation, other counters, the wait profile and the layers, each when the results hold it.
func (e *Experiment) Tables() []Table {
	var ts []Table
	for _, t := range []Table{e.DrillTable(), e.SeedTable(), e.ReadaheadTable()} { // the workload's own article table first
		if len(t.Rows) > 0 {
			ts = append(ts, t)
		}
	}
	ts = append(ts, e.MainTable())
	if t := e.SessionsTable(); len(t.Rows) > 0 {
		t.Open = true
		ts = append(ts, t)
	}
	if t := e.FaultsTable(); len(t.Rows) > 0 {
		ts = append(ts, t)
	}
	if t := e.StaleTable(); len(t.Rows) > 0 {
		t.Open = true
		ts = append(ts, t)
	}
	if t := e.TerminalsTable(); len(t.Rows) > 0 {
		t.Open = true
		ts = append(ts, t)
	}
	ts = append(ts, e.OpsTable())
	if t := e.CountersTable(); len(t.Rows) > 0 {
		ts = append(ts, t)
	}
	if e.HasWaits() {
		ts = append(ts, e.WaitsTable())
	}
	if e.HasWaits() || e.HasDevice() {
		ts = append(ts, e.LayersTable())
	}
	if t := e.NodeHostsTable(); len(t.Rows) > 0 {
		ts = append(ts, t)
	}
	return ts
}

// MainTable is shaped like the articles' tables: one row per load (or step), and per
// variant its time, throughput, headline counters (NOPM, TPM, IOPS, MB/s) and p95/p99.
func (e *Experiment) MainTable() Table {
	head := e.headline()
	cols := []string{"time s"}
	showOps := true
	for _, h := range head {
		showOps = showOps && h != "iops" // a storage test's ops/s is its IOPS
	}
	if showOps {
		cols = append(cols, "ops/s")
	}
	for _, c := range head {
		cols = append(cols, counterLabel(c))
	}
	bytes := e.HasBytes()
	if bytes {
		cols = append(cols, recvMBpsLabel)
	}
	cols = append(cols, "p95 ms", "p99 ms")
	rate := e.hasRate()
	if rate {
		cols = append(cols, rateHeaders()...)
	}
	lag := e.lagColumns()
	for _, c := range lag {
		cols = append(cols, c.Header)
	}
	t := Table{Name: e.slug() + "-main", Title: e.name() + ": throughput and latency per " + e.pointHeader(), Columns: []string{e.pointHeader()}}
	grouped := len(e.Variants) > 1 || (len(e.Variants) == 1 && e.Variants[0].Variant != "")
	for _, v := range e.Variants {
		if grouped {
			t.Groups = append(t.Groups, Group{Name: v.Name, Span: len(cols)})
		}
		t.Columns = append(t.Columns, cols...)
	}
	for pi, p := range e.Points {
		row := []Cell{txt(p)}
		for _, v := range e.Variants {
			c := v.Cells[pi]
			if c == nil {
				for range cols {
					row = append(row, blank())
				}
				continue
			}
			if analyze.LeftOut(c.Steps) != "" { // its figures measured a fault (the warnings say which)
				row = append(row, txt(leftOutCell))
				for range cols[1:] {
					row = append(row, absentCell())
				}
				continue
			}
			row = append(row, num(c.Seconds))
			if showOps {
				row = append(row, num(c.Throughput))
			}
			for _, h := range head {
				if x, ok := c.Counters[h]; ok {
					row = append(row, num(x))
				} else {
					row = append(row, blank())
				}
			}
			if bytes {
				row = append(row, num(c.MBps))
			}
			row = append(row, numMs(c.Latency.P95), numMs(c.Latency.P99))
			if rate {
				row = append(row, rateCells(c)...)
			}
			row = append(row, stepCells(c, lag)...)
		}
		t.add(row...)
	}
	return t
}

// leftOutCell stands in the main table for the figures of a point none of whose steps
// completed (analyze.LeftOut): cut by a fault, aborted or failed.
const leftOutCell = "incomplete"

// OpsTable lists latency percentiles per operation type, variant and load.
func (e *Experiment) OpsTable() Table {
	t := Table{Name: e.slug() + "-latency", Title: e.name() + ": latency per operation (ms)",
		Columns: []string{"variant", e.pointHeader(), "operation", "count", "errors", "mean", "p50", "p90", "p95", "p99", "p99.9", "max"}}
	for _, v := range e.Variants {
		for pi, c := range v.Cells {
			if c == nil {
				continue
			}
			for _, name := range sortedKeys(c.Ops) {
				op := c.Ops[name]
				h := op.Latency
				t.add(txt(v.Name), txt(e.Points[pi]), txt(name), intc(op.Count), intc(op.Errors),
					num(h.Mean/1000), numMs(h.P50), numMs(h.P90), numMs(h.P95), numMs(h.P99), numMs(h.P999), numMs(h.Max))
			}
		}
	}
	return t
}

// CountersTable lists the counters that are not in the main table.
func (e *Experiment) CountersTable() Table {
	head := map[string]bool{}
	for _, h := range e.headline() {
		head[h] = true
	}
	t := Table{Name: e.slug() + "-counters", Title: e.name() + ": counters", Columns: []string{"variant", e.pointHeader(), "counter", "value"}}
	for _, v := range e.Variants {
		for pi, c := range v.Cells {
			if c == nil {
				continue
			}
			for _, k := range sortedKeys(c.Counters) {
				if !head[k] {
					t.add(txt(v.Name), txt(e.Points[pi]), txt(k), num(c.Counters[k]))
				}
			}
		}
	}
	return t
}

// waitOrder puts the wait classes a DBA reads first (CPU, log, data reads, locks) first.
var waitOrder = []string{"cpu", "log", "data_read", "other_io", "lwlock", "lock", "sync_rep", "client", "other"}

// WaitClasses returns the wait classes found in the experiment, in reading order.
func (e *Experiment) WaitClasses() []string {
	set := map[string]bool{}
	for _, v := range e.Variants {
		for _, c := range v.Cells {
			if c != nil {
				for k, x := range c.Waits {
					if x > 0 {
						set[strings.ToLower(k)] = true
					}
				}
			}
		}
	}
	var out []string
	for _, k := range waitOrder {
		if set[k] {
			out = append(out, k)
			delete(set, k)
		}
	}
	return append(out, sortedKeys(set)...)
}

func waitOf(c *Figures, class string) float64 {
	for k, v := range c.Waits {
		if strings.EqualFold(k, class) {
			return v
		}
	}
	return 0
}

// WaitsTable is the wait profile: mean sessions in each wait class per step.
func (e *Experiment) WaitsTable() Table {
	classes := e.WaitClasses()
	t := Table{Name: e.slug() + "-waits", Title: e.name() + ": wait profile (mean sessions per class)",
		Columns: append([]string{"variant", e.pointHeader()}, classes...)}
	for _, v := range e.Variants {
		for pi, c := range v.Cells {
			if c == nil {
				continue
			}
			row := []Cell{txt(v.Name), txt(e.Points[pi])}
			for _, k := range classes {
				row = append(row, num(waitOf(c, k)))
			}
			t.add(row...)
		}
	}
	return t
}

// topWait names the wait class holding the most sessions.
func topWait(c *Figures) (string, float64) {
	type kv struct {
		k string
		v float64
	}
	var all []kv
	for k, v := range c.Waits {
		all = append(all, kv{k, v})
	}
	if len(all) == 0 {
		return "", 0
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v > all[j].v || all[i].v == all[j].v && all[i].k < all[j].k })
	return all[0].k, all[0].v
}

// LayersTable puts the layers side by side: what the client saw, what the database waited
// on, and what the device did.
func (e *Experiment) LayersTable() Table {
	t := Table{Name: e.slug() + "-layers", Title: e.name() + ": the layers side by side",
		Columns: []string{"variant", e.pointHeader(), "client mean ms", "client p99 ms", "DB sessions", "top wait", "device await ms", "device queue"}}
	for _, v := range e.Variants {
		for pi, c := range v.Cells {
			if c == nil {
				continue
			}
			total := 0.0
			for _, w := range c.Waits {
				total += w
			}
			top, tv := topWait(c)
			topText := blank()
			if top != "" && total > 0 {
				topText = txt(fmt.Sprintf("%s (%.0f%%)", top, 100*tv/total))
			}
			dev := []Cell{blank(), blank()}
			if c.HasDevice {
				dev = []Cell{num(c.DeviceAwaitMs), num(c.DeviceQueue)}
			}
			t.add(append([]Cell{txt(v.Name), txt(e.Points[pi]), num(c.Latency.Mean / 1000), numMs(c.Latency.P99), num(total), topText}, dev...)...)
		}
	}
	return t
}

func (e *Experiment) name() string {
	if e.Title != "" {
		return e.Title
	}
	return e.Command
}
