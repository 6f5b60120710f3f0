package report

import (
	"testing"
)

// A fixed-rate run's main table carries the terminal's rate columns; a closed-loop run's
// does not.
func TestMainTableRateColumns(t *testing.T) {
	r := tpccStudy().result(t)
	e := build(t, NewRun("r", r))[0]
	if main := e.MainTable(); contains(main.Columns, "asked/s") {
		t.Fatalf("closed-loop run has rate columns: %v", main.Columns)
	}
	for i := range r.Steps {
		r.Steps[i].Rate, r.Steps[i].LateStarts = 500, int64(7*i)
	}
	e = build(t, NewRun("r", r))[0]
	main := e.MainTable()
	col := -1
	for i, c := range main.Columns {
		if c == "asked/s" {
			col = i
		}
	}
	if col < 0 || main.Columns[col+1] != "done/s" || main.Columns[col+2] != "late" {
		t.Fatalf("columns %v", main.Columns)
	}
	row := main.Rows[0]
	if !row[col].Num || row[col].Value != 500 || !row[col+2].Num || !row[col+1].Num || row[col+1].Value <= 0 {
		t.Fatalf("rate cells %+v", row[col:col+3])
	}
}
