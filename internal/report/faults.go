package report

import (
	"strings"

	"github.com/agbench/agbench/internal/render"
)

// FaultsTable lists, per variant and step (each repeat apart), the failed operations and
// the sessions lost: one row per step that had either; empty when none had. Its figures are
// part of the run as much as its throughput: a run's table and its result carry them.
func (e *Experiment) FaultsTable() Table {
	t := Table{Name: e.slug() + "-faults", Title: e.name() + ": failed operations and lost sessions per " + e.pointHeader(), Open: true,
		Columns: []string{"variant", e.pointHeader(), "repeat", "errors", "sessions lost", "s without a session", "what"}}
	for _, v := range e.Variants {
		for pi, c := range v.Cells {
			if c == nil {
				continue
			}
			for _, st := range c.Steps {
				lines := render.StepFaults(st)
				if len(lines) == 0 {
					continue
				}
				var errs int64
				for _, ec := range st.Errors {
					errs += ec.Count
				}
				lost, down := blank(), blank()
				if r := st.Reconnects; r != nil {
					lost, down = intc(r.Lost), num(r.DownSeconds)
				}
				t.add(txt(v.Name), txt(e.Points[pi]), intc(int64(st.Repeat+1)), intc(errs), lost, down, txt(strings.Join(lines, "; ")))
			}
		}
	}
	return t
}
