package main

import (
	"context"
	"errors"
	"fmt"
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
			p, err := readPlan(args[0])
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

// readPlan reads, parses and checks a plan file against agbench's kinds: its shape, every
// flag, and then each experiment's spec as its command checks it against the plan's
// target, so that a plan runs whole or is refused whole.
func readPlan(file string) (*plan.Plan, error) {
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
	study := experiment.NewStudy(p, filepath.Join(p.Results, p.Name))
	if err := agerr.Join(p.Check(experiment.Catalog{}), study.Validate()); err != nil {
		return nil, err
	}
	return p, nil
}

// runExperiment runs one experiment of a study with its progress and prints it, as its
// command does.
func runExperiment(ctx context.Context, a *app, r experiment.StudyRun) error {
	if r.Spec == nil {
		return r.Err()
	}
	return runKind(ctx, a, r.Spec, kindSetup(a, flagArgs(r.Words, r.Flags), r.Flags))
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
		if code := run(ctx, a, args); code != 0 {
			return fmt.Errorf("creating cluster %s failed (exit %d); nothing else ran", cl.Name, code)
		}
		fmt.Fprintln(&log, shownCommand(args))
		if !cl.Keep {
			defer func() {
				// Destroy also after Ctrl-C: the study's context is done by then.
				say("agbench cluster destroy --name %s", cl.Name)
				if code := run(context.WithoutCancel(ctx), a, []string{"cluster", "destroy", "--name", cl.Name}); code != 0 && err == nil {
					err = fmt.Errorf("destroying cluster %s failed (exit %d)", cl.Name, code)
				}
			}()
		}
	}
	study := experiment.NewStudy(p, dir)
	var failed []string
	for i, r := range study.Runs {
		if ctx.Err() != nil {
			break
		}
		n := len(study.Runs)
		say("[%d/%d] %s: %s", i+1, n, r.Label, shownCommand(r.Args))
		fmt.Fprintln(&log, shownCommand(r.Args))
		t0 := time.Now()
		code := exitStatus(ctx, a, runExperiment(ctx, a, r))
		took := time.Since(t0).Round(100 * time.Millisecond)
		if code != 0 {
			say("[%d/%d] %s failed (exit %d) after %s", i+1, n, r.Label, code, took)
			failed = append(failed, r.Label)
			break
		}
		say("[%d/%d] %s done in %s", i+1, n, r.Label, took)
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
	runs, err := report.LoadRuns(paths)
	if err != nil {
		return err
	}
	exps, err := report.Build(runs)
	if err != nil {
		return err
	}
	fmt.Fprintln(a.stdout)
	return report.Write(a.stdout, exps, report.Output{HTML: filepath.Join(dir, p.Report), Tables: true}, time.Now())
}
