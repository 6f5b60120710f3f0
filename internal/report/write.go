package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/agbench/agbench/internal/atomicfile"
)

// Output is where a report goes: the HTML page, a folder for every table as CSV ("" for
// none), and whether the main tables are printed first.
type Output struct {
	HTML   string
	CSV    string
	Tables bool
}

// Write writes the report of exps, generated at now: the main tables on w (o.Tables), the
// HTML page at o.HTML (atomically: a reader never sees half a page), every table as CSV in
// o.CSV, and last the line "report: PATH" with the page's absolute path, which people and
// scripts look for.
func Write(w io.Writer, exps []*Experiment, o Output, now time.Time) error {
	if o.Tables {
		if err := WriteTables(w, exps); err != nil {
			return err
		}
		for _, e := range exps {
			for _, r := range e.Runs {
				if m := r.Result.Meta.Merged; m != nil {
					for _, l := range m.Lines() {
						fmt.Fprintf(w, "%s: segments  %s\n", r.Label, l)
					}
				}
			}
		}
	}
	page, err := HTML(exps, now)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(o.HTML, page, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", o.HTML, err)
	}
	if o.CSV != "" {
		var all []Table
		for _, e := range exps {
			all = append(all, e.Tables()...)
		}
		if err := os.MkdirAll(o.CSV, 0o755); err != nil {
			return err
		}
		paths, err := WriteCSVs(o.CSV, all)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote %d CSV tables to %s\n", len(paths), o.CSV)
	}
	abs, _ := filepath.Abs(o.HTML)
	fmt.Fprintf(w, "report: %s\n", abs)
	return nil
}
