package report

import (
	"math"
	"strings"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/stats"
	"github.com/agbench/agbench/internal/table"
)

// Standby lag in the report: a column per standby in the main table and a chart of the
// same figure against load (table.LagColumns: the replay lag at each step's end, from the
// source the sampler names), with where each figure came from (table.LagNotes).

// results are the experiment's runs' results.
func (e *Experiment) results() []*result.Result {
	out := make([]*result.Result, len(e.Runs))
	for i, r := range e.Runs {
		out[i] = r.Result
	}
	return out
}

func (e *Experiment) lagColumns() []table.Column { return table.LagColumns(e.results()...) }

// LagNotes say where the experiment's standby lag figures came from and why any is absent.
func (e *Experiment) LagNotes() []string { return table.LagNotes(e.results()...) }

// stepCells are one point's cells of step columns: the median of the repeats that
// measured each, absent when none did.
func stepCells(f *Figures, cols []table.Column) []Cell {
	var out []Cell
	for _, col := range cols {
		if v, ok := stepsMedian(f, col); ok {
			out = append(out, num(v))
		} else {
			out = append(out, blank())
		}
	}
	return out
}

// stepsMedian is the median of a column over the point's repeats that measured it.
func stepsMedian(f *Figures, col table.Column) (float64, bool) {
	var vals []float64
	for _, st := range f.Steps {
		if v, ok := col.Value(st); ok {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return 0, false
	}
	return stats.Median(vals), true
}

// lagChart draws each standby's lag at each point, one line per variant and standby; false
// when no step measured a standby's lag.
func (e *Experiment) lagChart() (chartView, bool) {
	cols := e.lagColumns()
	c := lineChart{Class: "lag", YLabel: "s", XLabel: e.pointHeader(), XTicks: e.Points}
	var leg []legendItem
	measured := false
	for _, col := range cols {
		for _, v := range e.Variants {
			xs, ys := make([]float64, len(e.Points)), make([]float64, len(e.Points))
			for pi, f := range v.Cells {
				xs[pi], ys[pi] = float64(pi), math.NaN()
				if f != nil {
					if y, ok := stepsMedian(f, col); ok {
						ys[pi], measured = y, true
					}
				}
			}
			name := strings.TrimSuffix(col.Header, " s")
			if v.Name != "" {
				name = v.Name + " · " + name
			}
			i := len(c.Lines)
			c.Lines = append(c.Lines, line{Name: name, Colour: colour(i), X: xs, Y: ys})
			leg = append(leg, legendItem{Name: name, Colour: colour(i)})
		}
	}
	if !measured {
		return chartView{}, false
	}
	return chartView{Title: "standby lag vs " + e.pointHeader(), Note: "replay lag at each step's end, the main table's figure; " + strings.Join(e.LagNotes(), "; "), SVG: c.SVG(), Legend: leg}, true
}
