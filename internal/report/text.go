package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/agbench/agbench/internal/table"
)

// WriteText prints a table for a terminal through table.Grid: a caption, the group header
// when there is one, and the columns aligned (numbers to the right).
func WriteText(w io.Writer, t Table) error {
	g := table.Grid{Title: t.Title, Columns: t.Columns, Groups: t.Groups}
	for _, r := range t.Rows {
		row := make([]table.Cell, len(r))
		for i, c := range r {
			row[i] = table.Cell{Text: c.Text, Right: c.Num}
		}
		g.Rows = append(g.Rows, row)
	}
	return g.Write(w)
}

// WriteSummary prints an experiment's findings (differences, what saturated, the knee) and
// its warnings, one line per kind with the first of them and how many more the report has.
func WriteSummary(w io.Writer, e *Experiment) error {
	var b strings.Builder
	main, groups := GroupWarnings(e.Findings())
	for _, f := range main {
		mark := "  "
		if f.Kind == "incomplete" {
			mark = "! "
		}
		fmt.Fprintf(&b, "%s%s\n", mark, f.Text)
	}
	for _, g := range groups {
		more := ""
		if n := len(g.Texts) - 1; n > 0 {
			more = fmt.Sprintf(" (and %d more like it in the report)", n)
		}
		fmt.Fprintf(&b, "! %s%s\n", g.Texts[0], more)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
