package main

import (
	"context"
	"fmt"
	"time"

	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/render"
)

func init() { views["drill"] = view{progress: drillProgress, render: renderDrill} }

// drillProgress shows each of the drill's events as a line on stderr, with the time since
// the drill began.
func drillProgress(a *app, _ experiment.Experiment) (func(experiment.Event), func()) {
	start := time.Now()
	return func(e experiment.Event) {
		if e, ok := e.(experiment.DrillEvent); ok {
			fmt.Fprintf(a.stderr, "%7.1fs  %s\n", time.Since(start).Seconds(), fmt.Sprintf(e.Format, e.Args...))
		}
	}, func() {}
}

// renderDrill prints the drill's table and verdict, and where its result is.
func renderDrill(_ context.Context, a *app, e experiment.Experiment, out *experiment.Outcome, runErr error) error {
	render.Drill(a.stdout, out.Result, e.(*experiment.DrillSettings).Ran().Summary)
	if out.Path != "" {
		fmt.Fprintf(a.stdout, "\nresult: %s\n", out.Path)
	}
	return runErr
}
