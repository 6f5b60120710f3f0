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
		switch f.Kind {
		case "incomplete":
			mark = "! "
		case "unjudged":
			mark = "? " // as the command marks a rule it could not apply
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

// WriteTables prints each experiment's articles' table, where its sessions landed (when
// it routes), its failed operations and lost sessions (when any), and its findings.
func WriteTables(w io.Writer, exps []*Experiment) error {
	for i, e := range exps {
		if i > 0 {
			fmt.Fprintln(w)
		}
		main := e.MainTable()
		if d := e.DrillTable(); len(d.Rows) > 0 { // a drill's cycles are its main table
			main = d
		}
		if err := WriteText(w, main); err != nil {
			return err
		}
		for _, n := range e.LagNotes() {
			fmt.Fprintln(w, "  "+n)
		}
		for _, t := range []Table{e.SessionsTable(), e.FaultsTable()} {
			if len(t.Rows) > 0 {
				if err := WriteText(w, t); err != nil {
					return err
				}
			}
		}
		// Each study's headline and findings apart: variants are compared within a study.
		studies := e.Studies()
		for _, s := range studies {
			h := s.Headline()
			if len(studies) > 1 {
				h = s.Title + ": " + h
			}
			fmt.Fprintln(w, "  "+h)
			if err := WriteSummary(w, s); err != nil {
				return err
			}
		}
	}
	fmt.Fprintln(w)
	return nil
}

// WriteComparison prints `agbench compare`: with two runs (names: their files) which is A
// and which B and how their set-ups differ, then per pair of variants the comparison's
// table, and a closing line when some point had too little data to tell a difference from
// noise.
func WriteComparison(w io.Writer, runs []*Run, names []string, e *Experiment, pairs [][2]*Variant) error {
	if len(names) == 2 {
		fmt.Fprintf(w, "A = %s\nB = %s\n", names[0], names[1])
		if diffs := SetupDifferences(runs[0].Result, runs[1].Result); len(diffs) > 0 {
			fmt.Fprintln(w, "A and B differ in their set-up (a difference of figures may come from any of these):")
			for _, d := range diffs {
				fmt.Fprintln(w, "  "+d)
			}
		} else {
			fmt.Fprintln(w, "A and B were set up alike (agbench, machine, server settings, topology, configuration)")
		}
		fmt.Fprintln(w)
	}
	unknown := false
	for i, p := range pairs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		cmp := Compare(e, p[0], p[1])
		unknown = unknown || cmp.OneRunEach
		if err := WriteText(w, cmp.Table()); err != nil {
			return err
		}
	}
	if unknown {
		fmt.Fprintln(w, "\ntoo little data to compare where a side measured too few operations, too short a window or no spread: run longer or repeat (--repeat 3) to tell a difference from noise")
	}
	return nil
}
