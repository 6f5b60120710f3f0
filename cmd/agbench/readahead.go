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

// readaheadProgress writes the experiment's progress lines on stderr, and says when a
// private server is being made.
func readaheadProgress(a *app, _ experiment.Experiment) (func(experiment.Event), func()) {
	return func(e experiment.Event) {
		switch e := e.(type) {
		case experiment.Log:
			fmt.Fprintln(a.stderr, e.Line)
		case experiment.PrivateServer:
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
