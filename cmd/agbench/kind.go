package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/segment"
)

// view is how the command layer shows a kind's run: its progress while it runs (an event
// sink and what clears it at the end) and its result once it has ended.
type view struct {
	progress func(a *app, e experiment.Experiment) (events func(experiment.Event), clear func())
	// render prints the outcome of a run (nil for a kind that records no result) that did
	// not fail before it had one, and returns the command's error.
	render func(ctx context.Context, a *app, e experiment.Experiment, out *experiment.Outcome, runErr error) error
	// command, when set, adds to the kind's command what its flags do not say: subcommands,
	// annotations.
	command func(a *app, c *cobra.Command)
	// args, when set, is the command line the result records, made from the kind's parsed
	// flag set and its arguments (cmdArgs or a study's flagArgs otherwise).
	args func(fs *pflag.FlagSet) []string
}

// views are the kinds' views by name; every registered kind has one.
var views = map[string]view{}

// kindCommand is the command of a registered kind, made from its Meta: the kind's flags
// and help, its spec built and checked before the run (PreRunE, also what a study
// checks), then run with its view.
func kindCommand(a *app, m experiment.Meta) *cobra.Command {
	words := strings.Fields(m.Name)
	c := &cobra.Command{Use: words[len(words)-1], Short: m.Description, Long: m.Long, Example: m.Example, Args: noArgs}
	if m.Use != "" {
		c.Use, c.Args = m.Use, cobra.ArbitraryArgs
	}
	build := m.Build(c.Flags())
	var spec experiment.Experiment
	c.PreRunE = func(cmd *cobra.Command, args []string) (err error) {
		if err := segmentFromEnv(a, cmd.Flags()); err != nil {
			return err
		}
		if spec, err = build(args); err != nil {
			return err
		}
		return spec.Validate()
	}
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		return runKind(cmd.Context(), a, spec, kindSetup(a, cmdArgs(cmd), cmd.Flags()))
	}
	if v := views[m.Name]; v.command != nil {
		v.command(a, c)
	}
	return c
}

// segmentFromEnv numbers a segment of --segments N without --segment by the completion
// index a pod of a Kubernetes Indexed Job finds in its environment. An index that is not
// one of N is bad input naming the variable: no flag of the user's gave it.
func segmentFromEnv(a *app, fs *pflag.FlagSet) error {
	n := fs.Lookup("segments")
	if n == nil || !fs.Changed("segments") || fs.Changed("segment") {
		return nil
	}
	idx := a.getenv(experiment.CompletionIndexEnv)
	if idx == "" {
		return nil
	}
	v := strings.TrimSpace(idx) + "/" + n.Value.String()
	if _, err := segment.Parse(v); err != nil {
		return agerr.BadInputf("$%s=%q with --segments %s: %v", experiment.CompletionIndexEnv, idx, n.Value, err)
	}
	return fs.Set("segment", v)
}

// kindSetup is how a kind's run is recorded: this agbench's version, its command line
// (the one its view makes, if it makes one), the folder of its --results and agbench's
// home. fs is the kind's parsed flag set, named after the kind (by cobra for a command, by
// the registry for a study's experiment).
func kindSetup(a *app, args []string, fs *pflag.FlagSet) experiment.Setup {
	if v := views[fs.Name()]; v.args != nil {
		args = v.args(fs)
	}
	s := experiment.Setup{Version: version, Args: args, Home: home(a)}
	if f := fs.Lookup("results"); f != nil {
		s.Results = f.Value.String()
	}
	return s
}

// runKind runs a spec with its kind's progress and renders its outcome.
func runKind(ctx context.Context, a *app, e experiment.Experiment, s experiment.Setup) error {
	v, ok := views[e.Kind()]
	if !ok {
		panic("agbench: no view of the experiment kind " + e.Kind())
	}
	var clear func()
	s.Events, clear = v.progress(a, e)
	out, runErr := experiment.Run(ctx, e, s)
	clear()
	if out == nil && runErr != nil {
		return runErr
	}
	return v.render(ctx, a, e, out, runErr)
}
