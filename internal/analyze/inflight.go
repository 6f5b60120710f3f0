package analyze

import "fmt"

// An operation still running when its window closed is in no latency figure: a server that
// stopped answering holds it, and the step's p99 and max say nothing of it.
const (
	// InFlightMinSec is the shortest age of such an operation that is judged.
	InFlightMinSec = 1.0
	// InFlightP99Factor: judged only when it had run this many times the completed
	// operations' p99 (a VU is always busy with one operation at the window's end).
	InFlightP99Factor = 10.0
)

// VInFlight is the verdict of a step that left a long operation out of its latencies.
const VInFlight = "in-flight"

// inFlight judges the operations still running when the steps' windows closed: the first
// step (by load) whose oldest had run long, and how many more did. Steps whose users wait
// between operations (think times, counted inside an operation's run) are not judged.
func inFlight(st []Step, loadName string) *Verdict {
	var worst []Step
	for _, s := range st {
		if s.ThinkMs > 0 || s.ThinkUnknown {
			continue
		}
		if s.InFlightOldestSec >= InFlightMinSec && s.InFlightOldestSec*1000 > InFlightP99Factor*s.P99Ms {
			worst = append(worst, s)
		}
	}
	if len(worst) == 0 {
		return nil
	}
	s := worst[0]
	msg := fmt.Sprintf("at %s %d operation(s) were still running when the window closed, the oldest for %.1f s where the completed ones' p99 was %s ms",
		count(s.Load, loadName), s.InFlight, s.InFlightOldestSec, fmtNum(s.P99Ms))
	if len(worst) > 1 {
		msg += fmt.Sprintf(", and at %d more step(s)", len(worst)-1)
	}
	return &Verdict{Code: VInFlight, Message: msg + ": the latency figures leave them out (a server that stopped answering holds them)"}
}
