package report

import (
	"github.com/agbench/agbench/internal/table"
)

// hasRate says whether some step of the experiment ran at a fixed rate: its main table
// then shows the terminal's rate columns (table.RateColumns).
func (e *Experiment) hasRate() bool {
	for _, v := range e.Variants {
		for _, c := range v.Cells {
			if c == nil {
				continue
			}
			for _, st := range c.Steps {
				if st.Rate > 0 {
					return true
				}
			}
		}
	}
	return false
}

// rateHeaders are the rate columns' headers.
func rateHeaders() []string {
	var out []string
	for _, c := range table.RateColumns() {
		out = append(out, c.Header)
	}
	return out
}

// rateCells are one point's rate columns: medians of the repeats that ran at a rate,
// absent for closed-loop steps.
func rateCells(f *Figures) []Cell { return stepCells(f, table.RateColumns()) }
