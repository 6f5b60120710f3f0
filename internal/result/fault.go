package result

import (
	"fmt"
	"strings"
)

// ErrorShareLimit is the share of failed operations in a step above which its figures
// describe a run with failures; below it the failures are a small share of the operations
// and the figures still describe the load asked. The errors verdict and the completeness
// rule (Step.FaultReason) both judge by it.
const ErrorShareLimit = 0.01

// FaultPrefix begins the incomplete reason of a step cut by a fault (Step.FaultReason).
const FaultPrefix = "cut by a fault: "

// FaultReason is why a step that ran to its end is nonetheless incomplete, or "" when it is
// not: a fault cut it (its workers lost sessions in the window: the server went away, a
// failover, a terminated backend), or more than ErrorShareLimit of its operations failed.
// Its figures then describe the fault as much as the load asked: the runner marks such a
// step incomplete with this reason, and the analysis, compare and the report leave it out.
func (s *Step) FaultReason() string {
	t := s.Totals()
	failed := ""
	if all := t.Count + t.Errors; all > 0 && t.Errors > 0 {
		failed = fmt.Sprintf("%d of %d operations failed (%.1f%%)", t.Errors, all, 100*float64(t.Errors)/float64(all))
		if states := s.errorStates(); states != "" {
			failed += ", SQLSTATE " + states
		}
	}
	if r := s.Reconnects; r != nil && r.Lost > 0 {
		why := fmt.Sprintf("%d session(s) lost, %d made again", r.Lost, r.Count)
		if r.Unrestored > 0 {
			why += fmt.Sprintf(", %d still lost at the window's end", r.Unrestored)
		}
		why += fmt.Sprintf(" (%.1f s without a session)", r.DownSeconds)
		if failed != "" {
			why += "; " + failed
		}
		return FaultPrefix + why
	}
	if all := t.Count + t.Errors; all > 0 && float64(t.Errors) > ErrorShareLimit*float64(all) {
		return fmt.Sprintf("operations lost to errors: %s, more than %.0f%%", failed, 100*ErrorShareLimit)
	}
	return ""
}

// errorStates lists the step's error classes ("57P01 08006"), most frequent first.
func (s *Step) errorStates() string {
	states := make([]string, 0, len(s.Errors))
	for _, e := range s.Errors {
		states = append(states, e.SQLState)
	}
	return strings.Join(states, " ")
}
