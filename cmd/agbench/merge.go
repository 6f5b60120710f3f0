package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/merge"
	"github.com/agbench/agbench/internal/render"
	"github.com/agbench/agbench/internal/report"
	"github.com/agbench/agbench/internal/result"
)

func init() { register(newMergeCmd) }

func newMergeCmd(a *app) *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "merge SEGMENT...",
		Short: "Merge the results of a run's segments (--segment I/N) into one result",
		Long: `Merge the results of the segments of one run, each run with --segment I/N (or --segments N
in a Kubernetes Indexed Job), into one result as if one load generator had run it all:
operations, rows, bytes and errors summed, latency histograms merged exactly (the HDR
histograms, not their percentiles), throughput per second aligned by time and summed. The
servers' own figures (samplers, buffer counters), which every segment read from the same
servers, are the lowest segment's. The merged result is written under --results and its
tables printed; 'agbench report' renders it like any run.

SEGMENT is a result.json, a run's folder, or a folder of run folders (e.g. one folder per
pod). Segments of different runs or settings, a segment given twice or out of range are
refused; a merge that lacks a segment, or holds one that did not complete, is written as
incomplete, naming it, and exits 1.`,
		Example: `  agbench merge results-0 results-1 results-2 --results results
  agbench merge collected/ --results results`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return agerr.BadInputf("%s: give the segments' results (files or folders)", c.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return mergeSegments(a, args, out)
		},
	}
	c.Flags().StringVar(&out, "results", "results", "folder for the merged run's folder")
	return c
}

// mergeSegments merges the segments' results named by args into one run's folder under out,
// prints its tables and returns the run's error (incomplete: exit 1; bad input: exit 2).
func mergeSegments(a *app, args []string, out string) error {
	if out == "" {
		return agerr.BadInputf("--results: empty folder name")
	}
	runs, err := report.LoadRuns(args)
	if err != nil {
		return agerr.BadInput(err)
	}
	in := make([]merge.Input, len(runs))
	for i, r := range runs {
		in[i] = merge.Input{Path: r.Path, Result: r.Result}
	}
	m, err := merge.Merge(in)
	if err != nil {
		return err
	}
	segs := make([]*result.Result, len(runs))
	for i, r := range runs {
		segs[i] = r.Result
	}
	analyseMerged(m, segs)
	dir, err := experiment.ReserveDir(result.RunDir(out, m.Meta.Started, m.Meta.Command))
	if err != nil {
		return err
	}
	path, err := result.Write(dir, m)
	if err != nil {
		return err
	}
	exps, err := report.Build([]*report.Run{report.NewRun(dir, m)})
	if err != nil {
		return err
	}
	if err := report.WriteTables(a.stdout, exps); err != nil {
		return err
	}
	render.Merged(a.stdout, m)
	fmt.Fprintf(a.stdout, "merged %d of %d segments: %s\n", len(m.Meta.Merged.Segments), m.Meta.Merged.Of, path)
	if !m.Complete {
		return fmt.Errorf("merged run incomplete: %s", m.IncompleteReason)
	}
	return nil
}

// analyseMerged checks the merged run as its kind checks the segments' sums, and attaches
// the analysis the kind makes of its runs, its options read from the command line the
// segments recorded.
func analyseMerged(m *result.Result, segs []*result.Result) {
	words := strings.Fields(m.Meta.Command)
	fs, build, ok := experiment.RegistryKinds(words)
	if !ok || len(m.Meta.Args) < len(words) {
		return
	}
	if err := fs.Parse(m.Meta.Args[len(words):]); err != nil {
		m.Warnings = append(m.Warnings, "analysis: the segments' command line: "+err.Error())
		return
	}
	spec, err := build(nil)
	if err != nil {
		return
	}
	if c, ok := spec.(experiment.MergeChecker); ok {
		c.CheckMerged(m, segs)
	}
	a, ok := spec.(experiment.Analyser)
	if !ok {
		return
	}
	if o, ok := a.Analysis(); ok && len(m.Steps) > 0 {
		if _, err := analyze.Attach(m, o); err != nil {
			m.Warnings = append(m.Warnings, err.Error())
		}
	}
}
