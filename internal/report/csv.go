package report

import (
	"bytes"
	"encoding/csv"
	"path/filepath"
	"strconv"

	"github.com/agbench/agbench/internal/atomicfile"
)

// CSV returns a table as CSV: one header row (a column under a group is named
// "group: column", or "column" under a group without a name) and numbers unformatted, so
// a spreadsheet reads them as numbers; a figure shown as "-" (absent) is empty.
func CSV(t Table) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	head := append([]string(nil), t.Columns...)
	col := 1
	for _, g := range t.Groups {
		for i := col; i < col+g.Span && i < len(head); i++ {
			if g.Name != "" {
				head[i] = g.Name + ": " + head[i]
			}
		}
		col += g.Span
	}
	if err := w.Write(head); err != nil {
		return nil, err
	}
	for _, r := range t.Rows {
		rec := make([]string, len(r))
		for i, c := range r {
			rec[i] = c.Text
			if c.Num && c.Text != "-" {
				rec[i] = strconv.FormatFloat(c.Value, 'f', -1, 64)
			} else if c.Text == "-" {
				rec[i] = ""
			}
		}
		if err := w.Write(rec); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// WriteCSVs writes each table as dir/<name>.csv (atomically) and returns the paths.
func WriteCSVs(dir string, tables []Table) ([]string, error) {
	var paths []string
	for _, t := range tables {
		b, err := CSV(t)
		if err != nil {
			return paths, err
		}
		p := filepath.Join(dir, t.Name+".csv")
		if err := atomicfile.Write(p, b, 0o644); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}
