package main

import (
	"context"
	"fmt"

	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/render"
)

func init() { views["tpcc run"] = view{progress: loadProgress("tx", "vus", "VUs"), render: renderTPCC} }

// renderTPCC prints a tpcc run: the table per step and variant, the stale reads, the
// analysis, where the result is and, with --check, the consistency conditions.
func renderTPCC(_ context.Context, a *app, e experiment.Experiment, out *experiment.Outcome, runErr error) error {
	s := e.(*experiment.TPCCRun)
	sw, mode, _ := s.Plan()
	render.TPCC(a.stdout, render.TPCCSetup{Warehouses: s.Meta.Warehouses, Mode: string(mode), Variants: sw.Compare.Variants(), Repeat: sw.Repeat, Segment: out.Result.Meta.Segment}, out.Result.Steps)
	render.Stale(a.stdout, out.Result)
	render.Analysis(a.stdout, out.Analysis)
	if out.Path == "" {
		return runErr
	}
	fmt.Fprintf(a.stdout, "result: %s\n", out.Path)
	if runErr != nil {
		return runErr
	}
	if c := s.Consistency; c != nil {
		fmt.Fprintln(a.stdout)
		return printCheck(a.stdout, c.Results, c.Err)
	}
	return nil
}
