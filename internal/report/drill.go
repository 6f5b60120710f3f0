package report

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/render"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/table"
	"github.com/agbench/agbench/internal/units"
)

// A drill's report: its verdict at the top, the table of cycles, and per cycle a timeline
// of the load's operations and errors per interval with the cycle's events marked (the
// fault, its detection, the promotion, writes and reads back, the listener's reroute), and
// the replication lag where it was sampled. A drill's cycles are not steps of a load curve:
// none of the load-curve charts apply.

// drillCycle is one cycle of a drill run, as the report reads it.
type drillCycle struct {
	run  *Run
	step *result.Step
	dc   *result.DrillCycle
}

// isDrill is true when the experiment's runs are drills.
func (e *Experiment) isDrill() bool { return e.Command == "drill" }

// drillCycles returns the cycles of the experiment's drill runs, in order.
func (e *Experiment) drillCycles() []drillCycle {
	var out []drillCycle
	for _, r := range e.Runs {
		for i := range r.Result.Steps {
			st := &r.Result.Steps[i]
			if dc, err := st.DrillCycle(); err == nil && dc != nil {
				out = append(out, drillCycle{run: r, step: st, dc: dc})
			}
		}
	}
	return out
}

// drillHeadline is the drills' verdicts, one per run ("sync commit: 0 of 41,220
// acknowledged commits lost in 20 failovers (kill-primary); …"), and what failed.
func (e *Experiment) drillHeadline() string {
	var parts []string
	for _, r := range e.Runs {
		run, err := r.Result.DrillRun()
		prefix := ""
		if len(e.Runs) > 1 {
			prefix = r.Label + ": "
		}
		switch {
		case err != nil || run == nil:
			parts = append(parts, prefix+"no drill verdict in the result")
		case len(run.Failed) > 0:
			parts = append(parts, fmt.Sprintf("%s%s; FAILED: %s", prefix, run.Verdict, strings.Join(run.Failed, "; ")))
		default:
			parts = append(parts, prefix+run.Verdict)
		}
	}
	return strings.Join(parts, " · ")
}

// drillKPIs are the drills' sums: commits acknowledged and lost, and the times back.
func (e *Experiment) drillKPIs() []kpi {
	var out []kpi
	secs := func(p50, mx *float64) (string, string) {
		if p50 == nil {
			return table.Absent, "not measured"
		}
		return fmt.Sprintf("%.2f s", *p50), fmt.Sprintf("p50; max %.2f s", *mx)
	}
	for _, r := range e.Runs {
		run, err := r.Result.DrillRun()
		if err != nil || run == nil {
			continue
		}
		prefix := ""
		if len(e.Runs) > 1 {
			prefix = r.Label + " · "
		}
		tot, checked := run.Totals()
		unchecked := notChecked(r)
		lost := kpi{Label: prefix + "acknowledged commits lost", Value: table.Absent,
			Note: fmt.Sprintf("not measured: no cycle was checked%s (%s, %s commit)", unchecked, run.Fault, run.Commit)}
		if checked {
			lost.Value = units.GroupInt(tot.Lost)
			lost.Note = fmt.Sprintf("of %s in %d checked cycles%s (%s, %s commit)", units.GroupInt(tot.Acked), run.CyclesDone, unchecked, run.Fault, run.Commit)
		}
		out = append(out, lost)
		if run.WriteBackP50 != nil || run.WritesBlockedP50 == nil {
			v, n := secs(run.WriteBackP50, run.WriteBackMax)
			out = append(out, kpi{Label: prefix + "writes back after", Value: v, Note: n})
		}
		if run.NoSyncMax != nil {
			out = append(out, noSyncKPI(prefix, run))
		}
		if run.WritesBlockedP50 != nil {
			v, n := secs(run.WritesBlockedP50, run.WritesBlockedMax)
			out = append(out, kpi{Label: prefix + "longest time without an acknowledged write", Value: v, Note: n})
		}
		v, n := secs(run.ReadBackP50, run.ReadBackMax)
		out = append(out, kpi{Label: prefix + "reads back after", Value: v, Note: n})
		doubt := kpi{Label: prefix + "in doubt", Value: table.Absent, Note: "not measured: no cycle was checked" + unchecked}
		if checked {
			doubt.Value = units.GroupInt(tot.InDoubt)
			doubt.Note = fmt.Sprintf("sent, never acknowledged; %s of them committed", units.GroupInt(tot.InDoubtPresent))
			if unchecked != "" {
				doubt.Note += fmt.Sprintf("; in %d checked cycles%s", run.CyclesDone, unchecked)
			}
		}
		out = append(out, doubt)
	}
	return out
}

// notChecked names the run's cycles that were not checked and why ("; not checked: cycle 1
// (no failover from p within 10m0s)"): their losses are not in the run's sums. Empty when
// every cycle was checked.
func notChecked(r *Run) string {
	var parts []string
	for i := range r.Result.Steps {
		dc, err := r.Result.Steps[i].DrillCycle()
		if err != nil || dc == nil || dc.Checked {
			continue
		}
		why := "no reason recorded"
		if len(dc.Problems) > 0 {
			why = dc.Problems[0]
		}
		parts = append(parts, fmt.Sprintf("cycle %d (%s)", dc.Cycle, why))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; not checked: " + strings.Join(parts, ", ")
}

// noSyncKPI is the longest time a new primary acknowledged commits with no synchronous
// standby: "at least" when that cycle's load ended first, and counted over the cycles where
// it was measured (a result from before agbench counted them gives no count).
func noSyncKPI(prefix string, run *result.DrillRun) kpi {
	v := fmt.Sprintf("%.2f s", *run.NoSyncMax)
	if run.NoSyncMaxOpen {
		v = "at least " + v
	}
	n := fmt.Sprintf("longest after a failover; cycles with one: %d", run.NoSyncCycles)
	if run.NoSyncMeasuredCycles > 0 {
		n = fmt.Sprintf("longest after a failover; in %d of %d cycles where it was measured", run.NoSyncCycles, run.NoSyncMeasuredCycles)
	}
	return kpi{Label: prefix + "commits acknowledged with no synchronous standby", Value: v, Note: n}
}

// DrillTable is the table of a drill's cycles: the fault, the commits acknowledged, lost
// and in doubt, the times (failover, writes back, writes blocked, the new primary without a
// synchronous standby, reads back, the listener's reroute), the WAL the new primary lacked, the errors by SQLSTATE and the state after.
func (e *Experiment) DrillTable() Table {
	t := Table{Name: "drill-cycles", Title: "drill: one row per cycle", Open: true,
		Columns: []string{"cycle", "fault", "from", "to", "acked", "lost", "in doubt", "committed", "failover s", "writes back s",
			"writes blocked s", "no sync standby s", "reads back s", "reroute write s", "reroute read s", "WAL lacked", "errors by SQLSTATE", "after"}}
	if !e.isDrill() {
		return t
	}
	cs := e.drillCycles()
	for _, c := range cs {
		dc := c.dc
		name := fmt.Sprint(dc.Cycle)
		if len(e.Runs) > 1 {
			name = c.run.Label + " " + name
		}
		lost, committed := txt(table.Absent), txt(table.Absent)
		if l, p, ok := dc.LostChecked(); ok {
			lost, committed = intc(l), intc(p)
		}
		wal := txt(table.Absent)
		if dc.WALBytesLacked != nil {
			wal = Cell{Text: units.FormatBytesShort(*dc.WALBytesLacked), Value: float64(*dc.WALBytesLacked), Num: true}
		}
		to := dc.To
		if to == "" {
			to = table.Absent
		}
		t.add(txt(name), txt(dc.Fault), txt(dc.From), txt(to), intc(dc.Acked), lost, intc(dc.InDoubt), committed,
			secCell(dc.FailoverSeconds), writesBackCell(dc), secCell(dc.WritesBlockedSeconds), noSyncCell(dc.SyncGap), secCell(dc.ReadBackSeconds),
			secCell(dc.RerouteWriteSeconds), secCell(dc.RerouteReadSeconds), wal, txt(errorCounts(c.step)), txt(stateAfter(dc)))
	}
	return t
}

// writesBackCell is the time until writes were back, marked "*" when the new primary's
// commits waited for the old primary to rejoin (the cycle's chart title says so).
func writesBackCell(dc *result.DrillCycle) Cell {
	c := secCell(dc.WriteBackSeconds)
	if dc.SyncWait != "" && dc.WriteBackSeconds != nil {
		c.Text += "*"
	}
	return c
}

// noSyncCell is the time the new primary had no synchronous standby, "+" when still none at
// the load's end: a lower bound is text, not a number, so that the CSV keeps its "+" rather
// than give the bound as the exact time.
func noSyncCell(g *result.DrillSyncGap) Cell {
	c := secCell(g.NoSync())
	if c.Num {
		c.Text = render.NoSyncCell(g)
		c.Num = !strings.HasSuffix(c.Text, "+")
	}
	return c
}

func secCell(v *float64) Cell {
	if v == nil {
		return txt(table.Absent)
	}
	return Cell{Text: fmt.Sprintf("%.2f", *v), Value: *v, Num: true}
}

// errorCounts is a cycle's errors by SQLSTATE ("57P01 3, 08006 12"), "0" when none.
func errorCounts(st *result.Step) string {
	if len(st.Errors) == 0 {
		return "0"
	}
	var parts []string
	for _, e := range st.Errors {
		parts = append(parts, fmt.Sprintf("%s %d", e.SQLState, e.Count))
	}
	return strings.Join(parts, ", ")
}

// stateAfter is what the cycle left: the old primary's state after a failover, the node
// the fault hit and how it was healed otherwise.
func stateAfter(dc *result.DrillCycle) string {
	switch {
	case dc.To == "" && dc.Target != "":
		return strings.TrimSpace(dc.Target + " " + dc.Healed)
	case dc.To == "" && dc.Healed != "":
		return dc.From + " " + dc.Healed
	case dc.OldPrimary != "":
		return "old primary " + dc.OldPrimary
	}
	return table.Absent
}

// Colours of a drill's timeline: its series, the fault's mark, and the other events' marks.
const (
	colWrites, colWriteErr, colReads, colReadErr = "#009E73", "#D55E00", "#0072B2", "#E69F00"
	colFault, colEvent                           = "#B00020", "#444444"
)

// drillCharts draws per cycle its timeline and, where sampled, its replication lag.
func (e *Experiment) drillCharts() []chartView {
	var out []chartView
	for _, c := range e.drillCycles() {
		tl := c.dc.Timeline
		title := fmt.Sprintf("cycle %d: %s", c.dc.Cycle, c.dc.Fault)
		if len(e.Runs) > 1 {
			title = c.run.Label + " " + title
		}
		if tl == nil || tl.IntervalMS <= 0 || len(tl.Writes) == 0 {
			continue // a drill from before agbench kept a timeline: its table row says the rest
		}
		t0 := c.dc.FaultAt
		xlabel := "seconds from the fault"
		if t0.IsZero() {
			t0, xlabel = tl.Start, "seconds from the cycle's start (no fault was injected)"
		}
		per := time.Duration(tl.IntervalMS) * time.Millisecond
		x := func(i int) float64 { return tl.Start.Sub(t0).Seconds() + (float64(i)+0.5)*per.Seconds() }
		series := func(name, col string, v []int64, dash bool) line {
			l := line{Name: name, Colour: col, Dash: dash}
			for i, n := range v {
				l.X, l.Y = append(l.X, x(i)), append(l.Y, float64(n))
			}
			return l
		}
		ylabel := fmt.Sprintf("per %d ms", tl.IntervalMS)
		var marks []mark
		for _, ev := range c.dc.Events {
			col := colEvent
			if ev.Event == result.EventFault {
				col = colFault
			}
			marks = append(marks, mark{X: ev.At.Sub(t0).Seconds(), Label: ev.Event, Colour: col})
		}
		evLegend := []legendItem{{Name: "fault", Colour: colFault}, {Name: "events", Colour: colEvent}}
		// Writes and reads apart: readers on a standby may run ten times the writers' rate,
		// which would flatten the writes' outage on one axis.
		writes := lineChart{Class: "timeseries drill-timeline", Wide: true, YLabel: ylabel, XLabel: xlabel, Numeric: true, Marks: marks,
			Lines: []line{series("writes acknowledged", colWrites, tl.Writes, false), series("writes failed", colWriteErr, tl.WriteErrors, false)}}
		out = append(out, chartView{Title: title + " — " + cycleSummary(c.dc), Note: "writes " + ylabel + "; events marked", Wide: true, SVG: writes.SVG(),
			Legend: append([]legendItem{{Name: "writes acknowledged", Colour: colWrites}, {Name: "writes failed", Colour: colWriteErr}}, evLegend...)})
		reads := lineChart{Class: "timeseries drill-reads", YLabel: ylabel, XLabel: xlabel, Numeric: true, Marks: marks,
			Lines: []line{series("reads", colReads, tl.Reads, false), series("reads failed", colReadErr, tl.ReadErrors, false)}}
		out = append(out, chartView{Title: title + ": reads", Note: "read intent, " + ylabel, SVG: reads.SVG(),
			Legend: append([]legendItem{{Name: "reads", Colour: colReads}, {Name: "reads failed", Colour: colReadErr}}, evLegend...)})
		if lag := lagChart(tl.Lag, t0, xlabel, marks); lag != nil {
			out = append(out, chartView{Title: title + ": replication lag", Note: "WAL not replayed yet, as the primary saw it; gaps where none was read",
				SVG: lag.chart.SVG(), Legend: lag.legend})
		} else {
			out = append(out, chartView{Title: title + ": replication lag", Note: "– not measured: no sample of pg_stat_replication was read in this cycle"})
		}
	}
	return out
}

// cycleSummary is a cycle's figures in a few words for its chart's title.
func cycleSummary(dc *result.DrillCycle) string {
	var parts []string
	if l, _, ok := dc.LostChecked(); ok {
		parts = append(parts, fmt.Sprintf("%s of %s acknowledged lost", units.GroupInt(l), units.GroupInt(dc.Acked)))
	} else {
		why := "not checked"
		if len(dc.Problems) > 0 { // why, as under the terminal's table: lost commits are "–" for it
			why += ": " + dc.Problems[0]
		}
		parts = append(parts, why)
	}
	if dc.To != "" {
		parts = append(parts, dc.From+" → "+dc.To)
	} else if dc.Target != "" {
		parts = append(parts, "hit "+dc.Target)
	}
	if dc.WritesBlockedSeconds != nil {
		parts = append(parts, fmt.Sprintf("writes blocked %.2f s", *dc.WritesBlockedSeconds))
	}
	if dc.WriteBackSeconds != nil && dc.To != "" {
		parts = append(parts, fmt.Sprintf("writes back after %.2f s", *dc.WriteBackSeconds))
	}
	if dc.SyncWait != "" {
		parts = append(parts, "* "+dc.SyncWait)
	}
	if dc.FaultStart != "" {
		parts = append(parts, "fault timed from "+dc.FaultStart)
	}
	if line := render.SyncGapSentence(dc.SyncGap); line != "" {
		parts = append(parts, line)
	}
	return strings.Join(parts, ", ")
}

type lagView struct {
	chart  lineChart
	legend []legendItem
}

// lagChart draws each standby's sampled lag in kB over the cycle; nil when none was sampled.
// A pause in the samples longer than a few intervals (no primary answered) is a gap.
func lagChart(samples []result.DrillLag, t0 time.Time, xlabel string, marks []mark) *lagView {
	if len(samples) == 0 {
		return nil
	}
	by := map[string][]result.DrillLag{}
	for _, s := range samples {
		by[s.Standby] = append(by[s.Standby], s)
	}
	names := make([]string, 0, len(by))
	for n := range by {
		names = append(names, n)
	}
	sort.Strings(names)
	v := &lagView{chart: lineChart{Class: "timeseries lag drill-lag", YLabel: "kB", XLabel: xlabel, Numeric: true, Marks: marks}}
	for i, n := range names {
		l := line{Name: n, Colour: colour(i)}
		for j, s := range by[n] {
			if j > 0 && s.At.Sub(by[n][j-1].At) > time.Second {
				l.X, l.Y = append(l.X, s.At.Sub(t0).Seconds()), append(l.Y, math.NaN())
			}
			l.X, l.Y = append(l.X, s.At.Sub(t0).Seconds()), append(l.Y, float64(s.LagBytes)/1000)
		}
		v.chart.Lines = append(v.chart.Lines, l)
		v.legend = append(v.legend, legendItem{Name: n, Colour: colour(i)})
	}
	return v
}
