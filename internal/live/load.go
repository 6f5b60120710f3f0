package live

import (
	"fmt"
	"io"
	"maps"
	"strconv"
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
	// unit names the operations ("ops", "tx"); knob is the param that counts the VUs
	// ("threads", "vus"), said as name ("threads", "VUs").
	unit, knob, name string
	last             int
	lastLine         time.Time
}

// LoadEvery is how often a line of progress is printed when the output is not a terminal.
const LoadEvery = 10 * time.Second

// NewLoad returns the display of a load of of steps whose operations are named unit, its VUs
// counted by the param knob and said as name.
func NewLoad(w io.Writer, interactive bool, of int, unit, knob, name string) *Load {
	return &Load{w: w, interactive: interactive, of: of, unit: unit, knob: knob, name: name}
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
		p.done(e.Step, e.Segment)
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
		pr.Point.Index+1, pr.Of, p.point(pr.Point, p.tickLoad(pr)), phase, pr.Ops, p.unit, pr.Errors, pr.Rate, p.unit)
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

func (p *Load) done(st result.Step, seg *result.Segment) {
	p.Clear()
	t := st.Totals()
	pt := runner.Point{Params: st.Params, Repeat: st.Repeat} // named as the ticks name it
	fmt.Fprintf(p.w, "step %d/%d %s: %.2fs, %d %s, %d errors, %.0f %s/s\n",
		st.Index+1, p.of, p.point(pt, p.stepLoad(&st, seg)), st.Window.Seconds(), t.Count, p.unit, t.Errors, st.OpsPerSecond(), p.unit)
}

// Clear removes the rewritten line from a terminal.
func (p *Load) Clear() {
	if p.interactive && p.last > 0 {
		fmt.Fprint(p.w, "\r"+strings.Repeat(" ", p.last)+"\r")
		p.last = 0
	}
}

// tickLoad is a tick's load: in a segment its share of the step's VUs, and the terminals
// over the pool's sessions of a step of terminals; nil for VUs of a whole run, which its
// params name.
func (p *Load) tickLoad(pr runner.Progress) *result.Load {
	seg, vus := pr.Segment, pr.Spec.VUs
	var rs *result.Segment
	if !seg.Whole() {
		rs = &result.Segment{Index: seg.Index, Of: seg.Of}
	}
	if n, err := strconv.Atoi(pr.Point.Params[result.TerminalsKnob]); err == nil {
		return &result.Load{Name: result.TerminalsKnob, N: seg.Count(n), Of: n, Sessions: seg.Count(vus), SessionsOf: vus, Segment: rs}
	}
	if rs == nil {
		return nil
	}
	return &result.Load{Name: p.name, N: seg.Count(vus), Of: vus, Segment: rs}
}

// stepLoad is an ended step's load as tickLoad says a tick's.
func (p *Load) stepLoad(st *result.Step, seg *result.Segment) *result.Load {
	l := result.LoadOf(st, seg, p.knob, p.name)
	if seg == nil && !l.Terminals() {
		return nil
	}
	return &l
}

// point names a step as its params do ("threads=8 routing=on #1"), or by its load l: a
// segment's share of the whole ("segment 1/3: 3 of 8 threads routing=on #1"), terminals
// over the pool's sessions ("30 terminals over 3 sessions #1").
func (p *Load) point(pt runner.Point, l *result.Load) string {
	if l == nil {
		return pt.String()
	}
	rest := runner.Point{Params: maps.Clone(pt.Params), Repeat: pt.Repeat}
	for _, k := range []string{p.knob, result.TerminalsKnob, result.SessionsKnob} {
		delete(rest.Params, k)
	}
	return l.String() + " " + rest.String()
}
