package report

import (
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/result"
)

// A run whose sampler measured a standby's lag has it as a column of the main table, the
// figure the steps' counters hold, a chart of it against load whose note names its source,
// and the same note under the terminal's table; a run without has neither.
func TestMainTableLagColumnAndChart(t *testing.T) {
	r := tpccStudy().result(t)
	e := build(t, NewRun("r", r))[0]
	if main := e.MainTable(); contains(main.Columns, "s1 lag s") {
		t.Fatalf("a run without lag sources has a lag column: %v", main.Columns)
	}
	if _, ok := e.lagChart(); ok {
		t.Fatal("a run without lag sources has a lag chart")
	}
	for i := range r.Steps {
		st := &r.Steps[i]
		st.Counters[result.PGStandbyName("db", "s1", result.PGReplayLagSeconds)] = 0.5 * float64(i)
		if err := st.SetExtra(result.ExtraSample, result.SampleStep{Nodes: map[string]result.SampleNode{
			"db": {Lag: []result.StandbyLag{{Standby: "s1", Method: result.LagFromPositions}}}}}); err != nil {
			t.Fatal(err)
		}
	}
	e = build(t, NewRun("r", r))[0]
	main := e.MainTable()
	col := -1
	for i, c := range main.Columns {
		if c == "s1 lag s" {
			col = i
			break
		}
	}
	if col < 0 {
		t.Fatalf("columns %v", main.Columns)
	}
	seen := map[float64]bool{}
	for _, row := range main.Rows {
		if !row[col].Num {
			t.Errorf("lag cell %+v", row[col])
		}
		seen[row[col].Value] = true
	}
	if len(seen) < 2 {
		t.Errorf("lag cells %v: not the steps' figures", seen)
	}
	c, ok := e.lagChart()
	if !ok || !strings.Contains(c.Note, result.LagFromPositions) || !strings.Contains(string(c.SVG), "<svg") {
		t.Errorf("lag chart %v %+v", ok, c)
	}
	var b strings.Builder
	if err := WriteTables(&b, []*Experiment{e}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "s1 lag from "+result.LagFromPositions) {
		t.Errorf("the terminal's tables do not say where the lag came from:\n%s", b.String())
	}
}
