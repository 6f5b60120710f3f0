package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/atomicfile"
	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/plan"
	"github.com/agbench/agbench/internal/report"
	"github.com/agbench/agbench/internal/result"
)

func init() { register(newRunCmd) }

func newRunCmd(a *app) *cobra.Command {
	var checkOnly bool
	c := &cobra.Command{
		Use:   "run PLAN.yaml",
		Short: "Run a study: a target and experiments from a plan file, one results folder, one report",
		Long: `Run the experiments of a plan file in order, against its target, and write one results
folder (<results>/<name>-<time>/, one run folder per experiment) and one HTML report in it.

The plan is checked whole before anything runs: its shape, every command, every flag and
every flag's value; each problem names the file, line and column (exit 2, nothing made).
A cluster target is created first (agbench cluster create) and destroyed at the end,
also when an experiment fails or the study is interrupted (unless keep: true).

  name: ror-quick
  target:
    cluster: {name: rorq, standbys: 1, commit: async, base_port: 6610, listener: 127.0.0.1:6620}
  experiments:
    - name: stress
      command: stress
      flags: {threads: [1, 2, 4], iterations: 50, compare: "routing=off,on", query: "SELECT 1"}

Each experiment gets --cluster (or --primary/--standby/--listener of a connect: target) and
--results when its command has those flags and the plan does not set them.`,
		Example: `  agbench run plans/ror-quick.yaml
  agbench run plans/ror-study.yaml --check`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return agerr.BadInputf("%s: give one plan file, got %d arguments", c.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := readPlan(cmd.Context(), a, args[0])
			if err != nil {
				return err
			}
			if checkOnly {
				fmt.Fprintf(a.stdout, "%s: plan %s is valid: %d experiment(s) against %s\n", args[0], p.Name, len(p.Experiments), p.Target.Summary())
				return nil
			}
			return runStudy(cmd.Context(), a, p)
		},
	}
	c.Flags().BoolVar(&checkOnly, "check", false, "check the plan and stop")
	return c
}

// readPlan reads, parses and checks a plan file against agbench's own commands: its shape,
// every flag, and then each experiment's whole command line as the command itself checks it
// against the plan's target, so that a plan runs whole or is refused whole.
func readPlan(ctx context.Context, a *app, file string) (*plan.Plan, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, agerr.BadInputf("%s: no such plan file", file)
		}
		return nil, agerr.BadInputf("%s: %v", file, err)
	}
	p, err := plan.Parse(file, data)
	if err != nil {
		return nil, err
	}
	if err := agerr.Join(p.Check(catalog{a: a}), validateExperiments(ctx, a, p)); err != nil {
		return nil, err
	}
	return p, nil
}

// validateExperiments checks each experiment's command line as its command checks it
// before it reads a cluster or connects (its arguments, then its PreRunE), and reports
// every experiment that would be refused, with its line in the plan.
func validateExperiments(ctx context.Context, a *app, p *plan.Plan) error {
	cat := catalog{a: a}
	var errs []error
	for i, e := range p.Experiments {
		cmd := cat.find(e.Command)
		if cmd == nil || cmd.PreRunE == nil || !cat.hasFlags(e) {
			continue // p.Check reports an unknown command or flag
		}
		study := filepath.Join(p.Results, p.Name)
		args := p.Args(i, study, filepath.Join(study, fmt.Sprintf("%02d-%s", i+1, e.Label())), func(flag string) bool { return cat.HasFlag(e.Command, flag) })
		cmd.SetContext(ctx)
		if err := checkCommand(cmd, args[len(e.Command):]); err != nil {
			// Each problem the command reported is one line: each gets the experiment's place.
			for _, line := range strings.Split(err.Error(), "\n") {
				if line = strings.TrimSpace(line); line != "" {
					errs = append(errs, agerr.BadInput(&plan.Error{File: p.File, Pos: e.Pos,
						Msg: fmt.Sprintf("experiments[%d] (%s): %s", i+1, e.Label(), line)}))
				}
			}
		}
	}
	return agerr.Join(errs...)
}

// checkCommand sets a command's flags from args and runs its checks, in cobra's order: the
// flags, the arguments, then PreRunE (which reads no cluster and connects to nothing).
func checkCommand(cmd *cobra.Command, args []string) error {
	if err := cmd.ParseFlags(args); err != nil {
		return cmd.FlagErrorFunc()(cmd, err)
	}
	rest := cmd.Flags().Args()
	if err := cmd.ValidateArgs(rest); err != nil {
		return err
	}
	if cmd.PreRunE != nil {
		return cmd.PreRunE(cmd, rest)
	}
	return nil
}

// runCommand runs one command line of a study (an experiment, or the creation and removal
// of its cluster) on a fresh command of its own: the command's checks, then its run, with
// no second pass through the root command. It reports an error as the root command does
// and returns the exit status.
func runCommand(ctx context.Context, a *app, args []string) int {
	root := newRoot(a)
	cmd, rest, err := root.Find(args)
	if err == nil && (cmd == root || cmd.RunE == nil) {
		err = agerr.BadInputf("%q: not a command that runs", strings.Join(args, " "))
	}
	if err == nil {
		cmd.SetContext(ctx)
		if err = checkCommand(cmd, rest); err == nil {
			err = cmd.RunE(cmd, cmd.Flags().Args())
		}
	}
	return exitStatus(ctx, a, err)
}

// catalog answers a plan's questions from a fresh command tree (flags are parsed on
// throw-away copies, never on the commands that run).
type catalog struct{ a *app }

func (c catalog) find(words []string) *cobra.Command {
	quiet := &app{stdout: io.Discard, stderr: io.Discard, getenv: c.a.getenv}
	root := newRoot(quiet)
	found, rest, err := root.Find(words)
	if err != nil || len(rest) > 0 || found == root {
		return nil
	}
	return found
}

func (c catalog) Command(words []string) bool {
	cmd := c.find(words)
	return cmd != nil && cmd.Runnable() && cmd.Annotations[groupOnly] == "" && cmd.CommandPath() != "agbench run"
}

// hasFlags says whether the experiment's command has every flag the experiment sets.
func (c catalog) hasFlags(e plan.Experiment) bool {
	for _, f := range e.Flags {
		if !c.HasFlag(e.Command, f.Name) {
			return false
		}
	}
	return true
}

func (c catalog) HasFlag(words []string, flag string) bool {
	cmd := c.find(words)
	return cmd != nil && flag != "help" && cmd.Flags().Lookup(flag) != nil
}

func (c catalog) CheckFlag(words []string, flag, value string) error {
	cmd := c.find(words)
	if cmd == nil {
		return fmt.Errorf("no such command")
	}
	f := cmd.Flags().Lookup(flag)
	if f == nil {
		return fmt.Errorf("no such flag")
	}
	return f.Value.Set(value)
}

// runStudy creates the target, runs every experiment in order with its progress, then
// writes the report; the cluster it created is destroyed whatever happens.
func runStudy(ctx context.Context, a *app, p *plan.Plan) (err error) {
	started := time.Now().UTC()
	dir, err := experiment.ReserveDir(filepath.Join(p.Results, p.Name+"-"+started.Format("20060102T150405Z")))
	if err != nil {
		return err
	}
	say := func(format string, args ...any) { fmt.Fprintf(a.stdout, "== "+format+"\n", args...) }
	say("study %s: %d experiment(s) against %s", p.Name, len(p.Experiments), p.Target.Summary())
	say("results: %s", dir)
	var log strings.Builder
	if cl := p.Target.Cluster; cl != nil && !cl.Reuse {
		args := cl.CreateArgs()
		say("%s", shownCommand(args))
		if code := runCommand(ctx, a, args); code != 0 {
			return fmt.Errorf("creating cluster %s failed (exit %d); nothing else ran", cl.Name, code)
		}
		fmt.Fprintln(&log, shownCommand(args))
		if !cl.Keep {
			defer func() {
				// Destroy also after Ctrl-C: the study's context is done by then.
				say("agbench cluster destroy --name %s", cl.Name)
				if code := runCommand(context.WithoutCancel(ctx), a, []string{"cluster", "destroy", "--name", cl.Name}); code != 0 && err == nil {
					err = fmt.Errorf("destroying cluster %s failed (exit %d)", cl.Name, code)
				}
			}()
		}
	}
	cat := catalog{a: a}
	var failed []string
	for i, e := range p.Experiments {
		if ctx.Err() != nil {
			break
		}
		out := filepath.Join(dir, fmt.Sprintf("%02d-%s", i+1, e.Label()))
		args := p.Args(i, dir, out, func(flag string) bool { return cat.HasFlag(e.Command, flag) })
		say("[%d/%d] %s: %s", i+1, len(p.Experiments), e.Label(), shownCommand(args))
		fmt.Fprintln(&log, shownCommand(args))
		t0 := time.Now()
		code := runCommand(ctx, a, args)
		took := time.Since(t0).Round(100 * time.Millisecond)
		if code != 0 {
			say("[%d/%d] %s failed (exit %d) after %s", i+1, len(p.Experiments), e.Label(), code, took)
			failed = append(failed, e.Label())
			break
		}
		say("[%d/%d] %s done in %s", i+1, len(p.Experiments), e.Label(), took)
	}
	reportErr := errors.Join(atomicfile.Write(filepath.Join(dir, "commands.txt"), []byte(log.String()), 0o644),
		writeStudyReport(a, p, dir))
	say("study %s took %s", p.Name, time.Since(started).Round(time.Second))
	switch {
	case len(failed) > 0:
		return fmt.Errorf("experiment %s failed; the report covers what ran", failed[0])
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return reportErr
}

// shownCommand is a command line as a study prints and logs it: without passwords (they
// come from PGPASSWORD or ~/.pgpass when it is pasted), quoted for a POSIX shell.
func shownCommand(args []string) string {
	return report.CommandLine(result.Meta{Args: result.RedactArgs(args)})
}

// writeStudyReport renders every result of the study's folder into its report.
func writeStudyReport(a *app, p *plan.Plan, dir string) error {
	paths, err := report.ResultPaths(dir)
	if err != nil {
		fmt.Fprintf(a.stdout, "no results to report in %s\n", dir)
		return nil
	}
	var runs []*report.Run
	for _, path := range paths {
		r, err := result.Read(path)
		if err != nil {
			return err
		}
		runs = append(runs, report.NewRun(filepath.Dir(path), r))
	}
	exps, err := report.Build(runs)
	if err != nil {
		return err
	}
	fmt.Fprintln(a.stdout)
	if err := report.WriteTables(a.stdout, exps); err != nil {
		return err
	}
	page, err := report.HTML(exps, time.Now())
	if err != nil {
		return err
	}
	out := filepath.Join(dir, p.Report)
	if err := atomicfile.Write(out, page, 0o644); err != nil {
		return err
	}
	abs, _ := filepath.Abs(out)
	fmt.Fprintf(a.stdout, "report: %s\n", abs)
	return nil
}
