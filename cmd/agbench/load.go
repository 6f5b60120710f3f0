package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/render"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/runner"
	"github.com/agbench/agbench/internal/table"
	"github.com/agbench/agbench/internal/workload/scan"
	"github.com/agbench/agbench/internal/workload/stress"
)

func init() {
	views[stress.Name] = loadView(render.StressColumns)
	views[scan.Name] = loadView(render.ScanColumns)
}

// loadProgress shows a load kind's ticks and steps, its operations named unit.
func loadProgress(unit string) func(a *app, e experiment.Experiment) (func(experiment.Event), func()) {
	return func(a *app, e experiment.Experiment) (func(experiment.Event), func()) {
		p := newProgress(a, e.(interface{ Steps() int }).Steps(), unit)
		return p.event, p.clear
	}
}

// loadView is the view of stress and scan: the table of cols, the analysis and the footer.
func loadView(cols []table.Column) view {
	return view{progress: loadProgress("ops"),
		render: func(_ context.Context, a *app, e experiment.Experiment, out *experiment.Outcome, runErr error) error {
			render.Load(a.stdout, out.Result, out.Analysis, out.Path, cols, e.(interface{ Ran() *experiment.Load }).Ran().StaleProbe)
			return runErr
		}}
}

// setup is how a command's run is recorded: this agbench's version, the command line as
// cobra parsed it (cmdArgs) and the folder of result folders; events get its progress.
func setup(cmd *cobra.Command, results string, events func(experiment.Event)) experiment.Setup {
	return experiment.Setup{Version: version, Args: cmdArgs(cmd), Results: results, Events: events}
}

// cmdArgs is the command line as cobra parsed it (flagArgs).
func cmdArgs(cmd *cobra.Command) []string {
	return flagArgs(strings.Fields(cmd.CommandPath())[1:], cmd.Flags())
}

// flagArgs is a command line of a command's words and its parsed flags, in a form that
// runs again when pasted: a flag and its value as two words, a boolean flag as
// --name=value (a boolean flag takes no separate value word).
func flagArgs(words []string, fs *pflag.FlagSet) []string {
	args := append([]string(nil), words...)
	fs.Visit(func(f *pflag.Flag) {
		if f.Value.Type() == "bool" {
			args = append(args, "--"+f.Name+"="+f.Value.String())
			return
		}
		if sv, ok := f.Value.(interface{ GetSlice() []string }); ok {
			for _, v := range sv.GetSlice() {
				args = append(args, "--"+f.Name, v)
			}
			return
		}
		args = append(args, "--"+f.Name, f.Value.String())
	})
	return args
}

// progress shows the runner's ticks, one rewritten line on a terminal and a line every
// progressEvery otherwise, and a line when a step ends.
type progress struct {
	w           io.Writer
	interactive bool
	of          int
	// unit names the operations ("ops", "tx").
	unit     string
	last     int
	lastLine time.Time
}

// progressEvery is how often a line of progress is printed when stderr is not a terminal.
const progressEvery = 10 * time.Second

func newProgress(a *app, of int, unit string) *progress {
	return &progress{w: a.stderr, interactive: a.interactive, of: of, unit: unit}
}

// event shows a load's event: a tick, a step's end or a line about the run.
func (p *progress) event(e experiment.Event) {
	switch e := e.(type) {
	case experiment.Log:
		p.clear()
		fmt.Fprintln(p.w, e.Line)
	case runner.Progress:
		p.show(e)
	case experiment.StepEnded:
		p.done(e.Step)
	}
}

func (p *progress) show(pr runner.Progress) {
	if !p.interactive && time.Since(p.lastLine) < progressEvery {
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

func (p *progress) done(st result.Step) {
	p.clear()
	t := st.Totals()
	pt := runner.Point{Params: st.Params, Repeat: st.Repeat} // named as the ticks name it
	fmt.Fprintf(p.w, "step %d/%d %s: %.2fs, %d %s, %d errors, %.0f %s/s\n",
		st.Index+1, p.of, pt, st.Window.Seconds(), t.Count, p.unit, t.Errors, st.OpsPerSecond(), p.unit)
}

func (p *progress) clear() {
	if p.interactive && p.last > 0 {
		fmt.Fprint(p.w, "\r"+strings.Repeat(" ", p.last)+"\r")
		p.last = 0
	}
}
