package render

import (
	"fmt"
	"io"

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

// Footer prints where sessions landed, warnings, errors and the result file.
func Footer(w io.Writer, r *result.Result, path string, landed []string) {
	for _, l := range landed {
		fmt.Fprintln(w, "landed  "+l)
	}
	for _, st := range r.Steps {
		faults := StepFaults(&st)
		for _, f := range faults {
			fmt.Fprintf(w, "step %d: %s\n", st.Index+1, f)
		}
		if len(st.Errors) == 0 { // a result written before errors were classed
			for _, e := range st.ErrorSamples {
				fmt.Fprintf(w, "error   step %d: %s\n", st.Index+1, e)
			}
		}
		for _, wr := range st.Warnings {
			fmt.Fprintf(w, "warning step %d: %s\n", st.Index+1, wr)
		}
	}
	for _, wr := range r.Warnings {
		fmt.Fprintln(w, "warning "+wr)
	}
	if !r.Complete {
		fmt.Fprintf(w, "incomplete: %s (* marks steps cut short)\n", r.IncompleteReason)
	}
	if path != "" {
		fmt.Fprintf(w, "result  %s\n", path)
	}
}
