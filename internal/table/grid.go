package table

import (
	"io"
	"strings"
	"unicode/utf8"
)

// Grid is a terminal table with a caption and, optionally, named groups of columns over
// the header (the articles' "SQL AG" | "SQL AG with ROR"): columns two spaces apart and
// " | " where a group begins, text cells on the left and numbers on the right.
type Grid struct {
	Title   string
	Groups  []Group // after the first column, which has none; empty for no group header
	Columns []string
	Rows    [][]Cell
}

// Group is a header over Span columns.
type Group struct {
	Name string
	Span int
}

// Cell is the text of one cell; Right aligns it on the right (a number).
type Cell struct {
	Text  string
	Right bool
}

// Write prints the caption, the group header when there is one, the column header (its
// first column on the left, the others on the right) and the rows; a group name wider
// than its columns is cut with "…", and lines carry no trailing spaces.
func (g Grid) Write(w io.Writer) error {
	width := make([]int, len(g.Columns))
	for i, c := range g.Columns {
		width[i] = utf8.RuneCountInString(c)
	}
	for _, r := range g.Rows {
		for i, c := range r {
			if i < len(width) {
				width[i] = max(width[i], utf8.RuneCountInString(c.Text))
			}
		}
	}
	var b strings.Builder
	b.WriteString(g.Title + "\n")
	if len(g.Groups) > 0 {
		b.WriteString(strings.TrimRight(g.groupLine(width), " ") + "\n")
	}
	row := func(cells []Cell, header bool) {
		var parts []string
		for i := range width {
			text, right := "", false
			if header {
				text, right = g.Columns[i], i > 0
			} else if i < len(cells) {
				text, right = cells[i].Text, cells[i].Right
			}
			parts = append(parts, pad(text, width[i], right))
		}
		b.WriteString(strings.TrimRight(g.join(parts), " ") + "\n")
	}
	row(nil, true)
	for _, r := range g.Rows {
		row(r, false)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// groupLine is the group header: the first column has no group; each group spans its
// columns and their separators.
func (g Grid) groupLine(width []int) string {
	line := pad("", width[0], false)
	col := 1
	for _, gr := range g.Groups {
		span := 0
		for i := col; i < col+gr.Span && i < len(width); i++ {
			span += width[i] + 2
		}
		col += gr.Span
		name := gr.Name
		if utf8.RuneCountInString(name) > span-2 {
			name = string([]rune(name)[:max(span-3, 1)]) + "…"
		}
		line += " | " + pad(name, span-2, false)
	}
	return line
}

// join joins cells with two spaces, and " | " where a column group begins.
func (g Grid) join(parts []string) string {
	starts := map[int]bool{}
	col := 1
	for _, gr := range g.Groups {
		starts[col] = true
		col += gr.Span
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
