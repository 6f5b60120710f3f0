package main

import (
	"fmt"

	"github.com/agbench/agbench/internal/result"
)

// stepFaults describes a step's failed operations by SQLSTATE (with when, in seconds of the
// window) and its lost sessions, one line each; nothing for a step without either.
func stepFaults(st *result.Step) []string {
	var out []string
	at := func(t0 result.ErrorClass) string {
		from, to := t0.First.Sub(st.Window.Start).Seconds(), t0.Last.Sub(st.Window.Start).Seconds()
		if t0.Count == 1 {
			return fmt.Sprintf("at %.1fs", from)
		}
		return fmt.Sprintf("%.1fs-%.1fs", from, to)
	}
	for _, c := range st.Errors {
		out = append(out, fmt.Sprintf("errors %s ×%s %s: %s", c.SQLState, groupInt(float64(c.Count)), at(c), c.Message))
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
