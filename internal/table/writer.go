package table

import (
	"io"
	"strings"
	"text/tabwriter"
)

// Align says on which side a Writer lines its cells up.
type Align int

const (
	// Right lines cells up on the right, as numbers are (the result and storage tables).
	Right Align = iota
	// Left lines cells up on the left, as names and lists are.
	Left
)

// padding is the space between two columns of a Writer.
const padding = 2

// Writer draws a plain terminal table: every cell ended by a tab, every line by a newline,
// columns padded to their widest cell plus two spaces, all cells aligned one way. It is
// text/tabwriter with agbench's one setting: lines written with fmt.Fprintf(w, "a\tb\t\n")
// come out as they did through tabwriter.NewWriter(w, 0, 0, 2, ' ', flags).
type Writer struct{ tw *tabwriter.Writer }

// NewWriter returns a Writer onto w; nothing reaches w before Flush.
func NewWriter(w io.Writer, a Align) *Writer {
	flags := uint(0)
	if a == Right {
		flags = tabwriter.AlignRight
	}
	return &Writer{tw: tabwriter.NewWriter(w, 0, 0, padding, ' ', flags)}
}

// Write takes tab-separated cells and newline-ended lines, as a tabwriter does.
func (t *Writer) Write(p []byte) (int, error) { return t.tw.Write(p) }

// Row writes one line of cells.
func (t *Writer) Row(cells ...string) {
	_, _ = io.WriteString(t.tw, strings.Join(cells, "\t")+"\t\n")
}

// Flush lays the table out and writes it.
func (t *Writer) Flush() error { return t.tw.Flush() }
