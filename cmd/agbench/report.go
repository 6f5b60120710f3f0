package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/report"
)

func init() {
	register(newReportCmd)
	register(newCompareCmd)
}

func newReportCmd(a *app) *cobra.Command {
	var out, csvDir string
	var quiet bool
	c := &cobra.Command{
		Use:   "report RESULT...",
		Short: "Render results as one self-contained HTML report (and CSV tables)",
		Long: `Render one or more results as a single HTML file that opens offline and makes no
network request: per experiment, throughput and p95/p99 latency against load with one line
per variant and the knee, saturation and SLO points marked; the articles' tables; latency
per operation; the wait profile per step; the layers side by side (client, database,
device); replication lag over time; validity verdicts and what saturated at the top; the
environment and the exact commands at the bottom. Runs of the same command are shown side
by side; variants are compared only within one study's cluster (one summary card per study).
The main tables are also printed, and --csv writes every table as CSV.

RESULT is a result.json, a run's folder, or a folder of run folders (a plan's results).`,
		Example: `  agbench report results/20261122T010203Z-stress -o report.html
  agbench report results/ror-quick-20261122T010000Z --csv tables/`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return agerr.BadInputf("%s: give at least one result file or folder", c.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			runs, err := report.LoadRuns(args)
			if err != nil {
				return err
			}
			if out == "" {
				return agerr.BadInputf("-o: give the HTML file to write")
			}
			exps, err := report.Build(runs)
			if err != nil {
				return err
			}
			return report.Write(a.stdout, exps, report.Output{HTML: out, CSV: csvDir, Tables: !quiet}, time.Now())
		},
	}
	c.Flags().StringVarP(&out, "output", "o", "report.html", "HTML file to write")
	c.Flags().StringVar(&csvDir, "csv", "", "also write every table as CSV into this folder")
	c.Flags().BoolVarP(&quiet, "quiet", "q", false, "do not print the tables")
	return c
}

func newCompareCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "compare A [B]",
		Short: "Compare two runs (or the variants of one) in the terminal, against their spread",
		Long: `Compare run B with run A point by point (each load of the sweep, each variant of a
--compare), or, given one run, its first variant with each other: the headline metric
(NOPM, IOPS, MB/s or ops/s) and p99 latency, the difference, and whether the difference is
larger than the run-to-run spread (the range of the repeats; run with --repeat 3 or more to
know it).`,
		Example: `  agbench compare results/20261122T010203Z-stress            # routing=off vs routing=on
  agbench compare results/before results/after`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return agerr.BadInputf("%s: give one result (to compare its variants) or two (A and B), got %d", c.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			runs, err := report.LoadCompared(args)
			if err != nil {
				return err
			}
			exps, err := report.Build(runs)
			if err != nil {
				return err
			}
			pairs, e, err := report.Pairs(exps)
			if err != nil {
				return agerr.BadInput(err)
			}
			return report.WriteComparison(a.stdout, runs, args, e, pairs)
		},
	}
	return c
}
