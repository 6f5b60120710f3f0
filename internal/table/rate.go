package table

import "github.com/agbench/agbench/internal/result"

// Rate columns: a fixed-rate step (--rate) shows the rate it asked, the
// operations it started per second of its window (successes and failures) and how many
// started after their scheduled time, so that a schedule not kept is seen in the table.
// A closed-loop step asked no rate: its cells are absent.

// HasRate says whether some step of the result ran at a fixed rate.
func HasRate(r *result.Result) bool {
	for _, st := range r.Steps {
		if st.Rate > 0 {
			return true
		}
	}
	return false
}

// AskedRate, DoneRate and LateStarts are a fixed-rate step's figures: the rate asked, the
// operations started per second of the window, and the operations that started late;
// each absent (false) for a closed-loop step.
func AskedRate(st *result.Step) (float64, bool) { return st.Rate, st.Rate > 0 }

func DoneRate(st *result.Step) (float64, bool) { return result.DoneRate(st) }

func LateStarts(st *result.Step) (float64, bool) { return float64(st.LateStarts), st.Rate > 0 }

// RateColumns are the columns of a fixed-rate run: "asked/s", "done/s" and "late".
func RateColumns() []Column {
	return []Column{
		{Header: "asked/s", Format: "%.0f", Value: AskedRate},
		{Header: "done/s", Format: "%.0f", Value: DoneRate},
		{Header: "late", Format: "%.0f", Value: LateStarts},
	}
}

// WithRate returns cols followed by RateColumns when some step of r ran at a fixed rate,
// else cols.
func WithRate(r *result.Result, cols []Column) []Column {
	if !HasRate(r) {
		return cols
	}
	return append(append([]Column(nil), cols...), RateColumns()...)
}
