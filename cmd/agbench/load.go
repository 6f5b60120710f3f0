package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/live"
	"github.com/agbench/agbench/internal/render"
	"github.com/agbench/agbench/internal/table"
	"github.com/agbench/agbench/internal/workload/scan"
	"github.com/agbench/agbench/internal/workload/stress"
)

func init() {
	views[stress.Name] = loadView(render.StressColumns)
	views[scan.Name] = loadView(render.ScanColumns)
}

// loadProgress shows a load kind's ticks and steps, its operations named unit, its VUs
// counted by the param knob and said as name.
func loadProgress(unit, knob, name string) func(a *app, e experiment.Experiment) (func(experiment.Event), func()) {
	return func(a *app, e experiment.Experiment) (func(experiment.Event), func()) {
		p := live.NewLoad(a.stderr, a.interactive, e.(interface{ Steps() int }).Steps(), unit, knob, name)
		return p.Event, p.Clear
	}
}

// loadView is the view of stress and scan: the table of cols, the analysis and the footer.
func loadView(cols []table.Column) view {
	return view{progress: loadProgress("ops", "threads", "threads"),
		render: func(_ context.Context, a *app, e experiment.Experiment, out *experiment.Outcome, runErr error) error {
			render.Load(a.stdout, out.Result, out.Analysis, out.Path, cols, e.(interface{ Ran() *experiment.Load }).Ran().StaleProbe)
			return runErr
		}}
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
