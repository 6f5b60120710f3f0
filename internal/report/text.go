package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// WriteText prints a table for a terminal: a caption, the group header when there is one,
// and the columns aligned (numbers to the right).
func WriteText(w io.Writer, t Table) error {
	width := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		width[i] = utf8.RuneCountInString(c)
	}
	for _, r := range t.Rows {
		for i, c := range r {
			if i < len(width) {
				width[i] = max(width[i], utf8.RuneCountInString(c.Text))
			}
		}
	}
	var b strings.Builder
	b.WriteString(t.Title + "\n")
	if len(t.Groups) > 0 {
		// The first column has no group; each group spans its columns and separators.
		line := pad("", width[0], false)
		col := 1
		for _, g := range t.Groups {
			span := 0
			for i := col; i < col+g.Span && i < len(width); i++ {
				span += width[i] + 2
			}
			col += g.Span
			name := g.Name
			if utf8.RuneCountInString(name) > span-2 {
				name = string([]rune(name)[:max(span-3, 1)]) + "…"
			}
			line += " | " + pad(name, span-2, false)
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	row := func(cells []Cell, header bool) {
		var parts []string
		for i := range width {
			text, right := "", false
			if header {
				text = t.Columns[i]
				right = i > 0
			} else if i < len(cells) {
				text, right = cells[i].Text, cells[i].Num
			}
			parts = append(parts, pad(text, width[i], right))
		}
		b.WriteString(strings.TrimRight(joinGroups(parts, t.Groups), " ") + "\n")
	}
	row(nil, true)
	for _, r := range t.Rows {
		row(r, false)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// joinGroups joins cells with two spaces, and " | " where a column group begins.
func joinGroups(parts []string, groups []Group) string {
	starts := map[int]bool{}
	if len(groups) > 0 {
		col := 1
		for _, g := range groups {
			starts[col] = true
			col += g.Span
		}
	}
	var b strings.Builder
	for i, p := range parts {
		switch {
		case i == 0:
		case starts[i]:
			b.WriteString(" | ")
		default:
			b.WriteString("  ")
		}
		b.WriteString(p)
	}
	return b.String()
}

func pad(s string, n int, right bool) string {
	gap := n - utf8.RuneCountInString(s)
	if gap <= 0 {
		return s
	}
	if right {
		return strings.Repeat(" ", gap) + s
	}
	return s + strings.Repeat(" ", gap)
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
