package live

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/runner"
)

// Load shows a load's progress (stress, scan, tpcc run): the runner's ticks, one
// rewritten line on a terminal and a line every LoadEvery otherwise, a line when a step
// ends and the run's lines between steps.
type Load struct {
	w           io.Writer
	interactive bool
	of          int
	// unit names the operations ("ops", "tx").
	unit     string
	last     int
	lastLine time.Time
}

// LoadEvery is how often a line of progress is printed when the output is not a terminal.
const LoadEvery = 10 * time.Second

// NewLoad returns the display of a load of of steps whose operations are named unit.
func NewLoad(w io.Writer, interactive bool, of int, unit string) *Load {
	return &Load{w: w, interactive: interactive, of: of, unit: unit}
}

// Event shows a load's event: a tick, a step's end or a line about the run.
func (p *Load) Event(e experiment.Event) {
	switch e := e.(type) {
	case experiment.Log:
		p.Clear()
		fmt.Fprintln(p.w, e.Line)
	case runner.Progress:
		p.show(e)
	case experiment.StepEnded:
		p.done(e.Step)
	}
}

func (p *Load) show(pr runner.Progress) {
	if !p.interactive && time.Since(p.lastLine) < LoadEvery {
		return
	}
	p.lastLine = time.Now()
	phase := fmt.Sprintf("measuring %3.0fs", pr.Elapsed.Seconds())
	if pr.Spec.Duration > 0 {
		phase += fmt.Sprintf(" of %.0fs", pr.Spec.Duration.Seconds())
	}
	if !pr.Measuring {
		phase = fmt.Sprintf("ramp-up, %3.0fs left", max(0, -pr.Elapsed.Seconds()))
	}
	line := fmt.Sprintf("step %d/%d %s: %s, %d %s, %d errors, %.0f %s/s",
		pr.Point.Index+1, pr.Of, pr.Point, phase, pr.Ops, p.unit, pr.Errors, pr.Rate, p.unit)
	switch {
	case pr.TickOps > 0:
		line += fmt.Sprintf(", p50 %v, p99 %v", pr.P50.Round(time.Microsecond), pr.P99.Round(time.Microsecond))
	case pr.Ops > 0: // none in the last tick: no latency to show, never 0s
		line += ", p50 –, p99 – (none done in the last tick)"
	}
	if !p.interactive {
		fmt.Fprintln(p.w, line)
		return
	}
	pad := max(p.last-len(line), 0)
	p.last = len(line)
	fmt.Fprint(p.w, "\r"+line+strings.Repeat(" ", pad))
}

func (p *Load) done(st result.Step) {
	p.Clear()
	t := st.Totals()
	pt := runner.Point{Params: st.Params, Repeat: st.Repeat} // named as the ticks name it
	fmt.Fprintf(p.w, "step %d/%d %s: %.2fs, %d %s, %d errors, %.0f %s/s\n",
		st.Index+1, p.of, pt, st.Window.Seconds(), t.Count, p.unit, t.Errors, st.OpsPerSecond(), p.unit)
}

// Clear removes the rewritten line from a terminal.
func (p *Load) Clear() {
	if p.interactive && p.last > 0 {
		fmt.Fprint(p.w, "\r"+strings.Repeat(" ", p.last)+"\r")
		p.last = 0
	}
}
