package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/render"
	"github.com/agbench/agbench/internal/workload/readahead"
)

func init() {
	views[readahead.Name] = view{progress: readaheadProgress, render: renderReadahead, command: func(_ *app, c *cobra.Command) {
		c.Annotations = map[string]string{noConnStrings: "readahead restarts its server and drops the caches between runs, " +
			"so it runs on an agbench cluster (--cluster NAME) or, by default, on a private throwaway server of its own; a cluster made by hand is not touched"}
	}}
}

// readaheadProgress gives the experiment's own progress lines stderr, and says when a
// private server is being made.
func readaheadProgress(a *app, e experiment.Experiment) (func(experiment.Event), func()) {
	e.(*experiment.Readahead).Config.Progress = a.stderr
	return func(e experiment.Event) {
		if _, ok := e.(experiment.PrivateServer); ok {
			fmt.Fprintln(a.stderr, "making a private throwaway server")
		}
	}, func() {}
}

// renderReadahead prints the conditions and the STATISTICS IO table, and the result's folder.
func renderReadahead(_ context.Context, a *app, e experiment.Experiment, out *experiment.Outcome, runErr error) error {
	r := e.(*experiment.Readahead)
	render.Readahead(a.stdout, r.Conditions, r.Rows, out.Result.Warnings)
	if out.Path != "" {
		fmt.Fprintf(a.stdout, "\nresult: %s\n", filepath.Dir(out.Path))
	}
	return runErr
}
