// Command agbench is PostgreSQL's availability-group toolkit and benchmark bench in one
// binary. This package holds flag parsing and wiring only: every command's work is done by
// an internal package, and only this layer touches os, the environment, stdout and exit codes.
//
// Imports from agbench: only internal/....
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/experiment"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// app is what a command may use of the outside world; tests fill it in-process.
type app struct {
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	// interactive is true when stdout is a terminal (progress bars instead of lines).
	interactive bool
}

// commands holds the constructors of the top-level commands; each command's file adds its
// own in an init function, so commands land without touching this file.
var commands []func(*app) *cobra.Command

func register(c func(*app) *cobra.Command) { commands = append(commands, c) }

// noConnStrings is the annotation of a command that cannot act on a cluster given by
// connection strings: its value says why and what it takes instead, the message given for
// --primary, --standby or --listener (an "unknown flag" said neither).
const noConnStrings = "agbench/no-connection-strings"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	a := &app{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, interactive: isTerminal(os.Stdout)}
	code := run(ctx, a, os.Args[1:])
	stop()
	os.Exit(code)
}

// run executes one command line and returns the exit status.
func run(ctx context.Context, a *app, args []string) int {
	root := newRoot(a)
	root.SetArgs(args)
	return exitStatus(ctx, a, root.ExecuteContext(ctx))
}

// exitStatus reports a command's error on stderr (as interrupted when the context was
// cancelled and the input was not bad) and returns its exit status.
func exitStatus(ctx context.Context, a *app, err error) int {
	if err != nil {
		if ctx.Err() != nil && !agerr.IsBadInput(err) {
			err = fmt.Errorf("interrupted: %w", err)
		}
		fmt.Fprintf(a.stderr, "agbench: %v\n", err)
	}
	return agerr.ExitCode(err)
}

func newRoot(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "agbench",
		Short: "PostgreSQL availability groups, read-only routing and benchmarks in one binary",
		Long: `agbench brings SQL Server's Always On availability-group toolkit to PostgreSQL:
a local cluster of a primary and readable hot standbys, a listener that routes
read-intent sessions to standbys, replica seeding, and workloads that walk load up
the curve, find the knee and say what saturated.

Exit status: 0 done, 1 the work failed, 2 bad input (nothing was made or changed).`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if why := c.Annotations[noConnStrings]; why != "" {
			for _, f := range []string{"--primary", "--standby", "--listener"} {
				if strings.HasPrefix(err.Error(), "unknown flag: "+f) {
					return agerr.BadInputf("%s: %s: it takes no connection strings: %s", c.CommandPath(), f, why)
				}
			}
		}
		return agerr.BadInputf("%s: %v (see %s --help)", c.CommandPath(), err, c.CommandPath())
	})
	for _, c := range commands {
		root.AddCommand(c(a))
	}
	for _, m := range experiment.Registered() {
		addKind(root, a, m)
	}
	// Unknown subcommands are bad input too.
	for _, c := range append([]*cobra.Command{root}, root.Commands()...) {
		if c.Args == nil && (c == root || c.HasSubCommands()) {
			c.Args = unknownSubcommand
			if c.RunE == nil && c.Run == nil {
				c.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
				if c.Annotations == nil {
					c.Annotations = map[string]string{}
				}
				c.Annotations[groupOnly] = "true"
			}
		}
	}
	return root
}

// addKind adds the command of a registered kind of experiment to root, or to the group its
// first word names.
func addKind(root *cobra.Command, a *app, m experiment.Meta) {
	c := kindCommand(a, m)
	parent := root
	if words := strings.Fields(m.Name); len(words) > 1 {
		if p, _, err := root.Find(words[:1]); err == nil && p != root {
			parent = p
		}
	}
	parent.AddCommand(c)
}

// groupOnly marks a command that only groups others (running it shows its help).
const groupOnly = "agbench.group"

func unknownSubcommand(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	var names []string
	for _, s := range c.Commands() {
		if !s.Hidden {
			names = append(names, s.Name())
		}
	}
	return agerr.BadInputf("%s: unknown command %q (commands: %s)", c.CommandPath(), args[0], strings.Join(names, ", "))
}

// noArgs is cobra.NoArgs as bad input.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return agerr.BadInputf("%s takes no arguments, got %q", c.CommandPath(), strings.Join(args, " "))
	}
	return nil
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
