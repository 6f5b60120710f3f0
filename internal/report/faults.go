package report

import (
	"fmt"
	"strings"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/units"
)

// StepFaults describes a step's failed operations by SQLSTATE (with when, in seconds of the
// window) and its lost sessions, one line each; nothing for a step without either. The
// commands print these lines under their tables; the report's faults table shows them.
func StepFaults(st *result.Step) []string {
	var out []string
	at := func(c result.ErrorClass) string {
		from, to := c.First.Sub(st.Window.Start).Seconds(), c.Last.Sub(st.Window.Start).Seconds()
		if c.Count == 1 {
			return fmt.Sprintf("at %.1fs", from)
		}
		return fmt.Sprintf("%.1fs-%.1fs", from, to)
	}
	for _, c := range st.Errors {
		out = append(out, fmt.Sprintf("errors %s ×%s %s: %s", c.SQLState, units.GroupInt(c.Count), at(c), c.Message))
	}
	if r := st.Reconnects; r != nil && r.Lost > 0 {
		line := fmt.Sprintf("sessions lost %d, made again %d", r.Lost, r.Count)
		if r.Unrestored > 0 {
			line += fmt.Sprintf(", still lost at the end %d", r.Unrestored)
		}
		line += fmt.Sprintf("; %.1fs without a session (longest %.1fs), %d failed attempts", r.DownSeconds, r.MaxDownSeconds, r.Failed)
		out = append(out, line)
	}
	return out
}

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
				lines := StepFaults(st)
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
