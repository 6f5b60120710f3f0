package report

import (
	"fmt"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/units"
)

// TerminalsTable is tpcc's emulated terminals (result.TerminalsStep), one row per step that
// had them (per run when several are compared): how many over how many sessions, whether
// they kept the specification's ten per warehouse, tpmC per warehouse against its bound, the
// response times' 90th percentiles (the wait for a session inside them, clause 5.2.5.4),
// the wait itself and the driver's memory. Empty when no step carries the section.
func (e *Experiment) TerminalsTable() Table {
	cols := []string{"step", "terminals", "sessions", "per warehouse", "terminal rule", "tpmC", "tpmC per warehouse", "bound"}
	for _, k := range result.TPCCOps {
		cols = append(cols, k+" p90 ms")
	}
	cols = append(cols, "queue p90 ms", "queue max ms", "queued at end", "driver peak RSS MiB", "Go heap MiB")
	t := Table{Name: e.slug() + "-terminals", Title: e.name() + ": emulated terminals (TPC-C clause 5.2.5)", Columns: cols}
	for _, r := range e.Runs {
		for i := range r.Result.Steps {
			st := &r.Result.Steps[i]
			ts, err := st.Terminals()
			if err != nil || ts == nil {
				continue // a section that does not decode fails the run's reading (Run.read)
			}
			t.add(e.terminalsRow(r, st, ts)...)
		}
	}
	return t
}

// terminalsRow is one step's row of the terminals table.
func (e *Experiment) terminalsRow(r *Run, st *result.Step, ts *result.TerminalsStep) []Cell {
	step := fmt.Sprintf("%d", st.Index+1)
	if len(e.Runs) > 1 {
		step = r.Label + ": " + step
	}
	perWH, rule := blank(), txt("within")
	if wh := ts.HomeWarehouses(); wh > 0 { // a segment's terminals are on its own warehouses
		perWH = num(float64(ts.Terminals) / float64(wh))
	}
	if why := ts.OutsideSpec(); why != "" {
		rule = txt("outside: " + why)
	}
	row := []Cell{txt(step), intc(int64(ts.Terminals)), intc(int64(ts.Sessions)), perWH, rule,
		num(ts.TpmC), num(ts.TpmCPerWarehouse), num(ts.TpmCBound())}
	for _, k := range result.TPCCOps {
		if op := st.Ops[k]; op != nil && op.Count > 0 {
			row = append(row, numMs(op.Latency.P90))
		} else {
			row = append(row, blank())
		}
	}
	q := ts.QueueWait["*"]
	qp90, qmax := blank(), blank()
	if q.Count > 0 {
		qp90, qmax = numMs(q.P90), numMs(q.Max)
	}
	rss := blank()
	if p := ts.Driver.PeakRSSBytes; p != nil {
		rss = num(float64(*p) / float64(units.MiB))
	}
	return append(row, qp90, qmax, intc(int64(ts.QueuedAtEnd)), rss, num(float64(ts.Driver.HeapBytes)/float64(units.MiB)))
}
