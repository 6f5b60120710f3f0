package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/plan"
	"github.com/agbench/agbench/internal/report"
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
			s, err := readPlan(args[0])
			if err != nil {
				return err
			}
			if p := s.Plan; checkOnly {
				fmt.Fprintf(a.stdout, "%s: plan %s is valid: %d experiment(s) against %s\n", args[0], p.Name, len(p.Experiments), p.Target.Summary())
				return nil
			}
			return runStudy(cmd.Context(), a, s)
		},
	}
	c.Flags().BoolVar(&checkOnly, "check", false, "check the plan and stop")
	return c
}

// readPlan reads, parses and checks a plan file against agbench's kinds: its shape, every
// flag, and then each experiment's spec as its command checks it against the plan's
// target, so that a plan runs whole or is refused whole.
func readPlan(file string) (*experiment.Study, error) {
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
	return study, nil
}

// runStudy runs a study: each experiment with its kind's progress and view, the report at
// the end, and the study's own progress printed as it comes.
func runStudy(ctx context.Context, a *app, s *experiment.Study) error {
	s.Experiment = func(ctx context.Context, r experiment.StudyRun) error {
		return runKind(ctx, a, r.Spec, kindSetup(a, flagArgs(r.Words, r.Flags), r.Flags))
	}
	s.Report = func(dir string) error { return writeStudyReport(a, s.Plan, dir) }
	s.Agbench = func() (string, error) { return selfBinary(a) }
	_, err := experiment.Run(ctx, s, experiment.Setup{Version: version, Home: home(a), Events: studyProgress(ctx, a)})
	return err
}

// studyProgress prints a study's progress: its own lines after "==", and the cluster it
// creates and destroys as cluster create and cluster destroy print them.
func studyProgress(ctx context.Context, a *app) func(experiment.Event) {
	say := func(format string, args ...any) { fmt.Fprintf(a.stdout, "== "+format+"\n", args...) }
	return func(e experiment.Event) {
		switch e := e.(type) {
		case experiment.StudyBegun:
			say("study %s: %d experiment(s) against %s", e.Name, e.Experiments, e.Target)
			say("results: %s", e.Dir)
		case experiment.ClusterCreating:
			say("%s", experiment.ShownCommand(e.Args))
		case experiment.Log:
			fmt.Fprintln(a.stderr, e.Line)
		case experiment.ClusterCreated:
			if exitStatus(ctx, a, e.Err) == 0 {
				printCreated(ctx, a, e.Topology, e.Took)
			}
		case experiment.ExperimentBegun:
			say("[%d/%d] %s: %s", e.I, e.N, e.Label, experiment.ShownCommand(e.Args))
		case experiment.ExperimentEnded:
			took := e.Took.Round(100 * time.Millisecond)
			if code := exitStatus(ctx, a, e.Err); code != 0 {
				say("[%d/%d] %s failed (exit %d) after %s", e.I, e.N, e.Label, code, took)
			} else {
				say("[%d/%d] %s done in %s", e.I, e.N, e.Label, took)
			}
		case experiment.StudyEnded:
			say("study %s took %s", e.Name, e.Took.Round(time.Second))
		case experiment.ClusterDestroying:
			say("agbench cluster destroy --name %s", e.Name)
		case experiment.ClusterDestroyed:
			// Not "interrupted": the study destroys its cluster after Ctrl-C on purpose.
			if exitStatus(context.Background(), a, e.Err) == 0 {
				printClusterDone(a, e.Name, "destroy", e.Took)
			}
		}
	}
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
