package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/live"
	"github.com/agbench/agbench/internal/render"
)

func init() {
	views["disk"] = view{progress: diskProgress, render: renderDisk, args: diskArgv}
}

// diskProgress shows the test file's creation and each step.
func diskProgress(a *app, e experiment.Experiment) (func(experiment.Event), func()) {
	d := e.(*experiment.Disk)
	show := live.NewDisk(a.stderr, a.interactive, d.Path)
	d.Prepare.Progress = show.Fill
	return show.Event, func() {}
}

// renderDisk prints the tester's tables, the analysis and where the result went.
func renderDisk(_ context.Context, a *app, e experiment.Experiment, out *experiment.Outcome, runErr error) error {
	d := e.(*experiment.Disk)
	if d.Report == nil {
		return runErr
	}
	if len(d.Report.Steps) > 0 || d.Report.Verify != nil {
		render.Disk(a.stdout, d.Report)
	}
	render.Analysis(a.stdout, out.Analysis)
	if out.Path != "" {
		fmt.Fprintf(a.stdout, "\nresults: %s\n", out.Path)
	}
	return runErr
}

// diskArgv rebuilds the command line from the parsed flags (those set, FILE, DiskSpd's
// switches after --), for the result's meta.
func diskArgv(fs *pflag.FlagSet) []string {
	argv := []string{"disk"}
	fs.Visit(func(f *pflag.Flag) { argv = append(argv, "--"+f.Name+"="+f.Value.String()) })
	args := fs.Args()
	if d := fs.ArgsLenAtDash(); d >= 0 {
		return append(append(append(argv, args[:d]...), "--"), args[d:]...)
	}
	return append(argv, args...)
}
