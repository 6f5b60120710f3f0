package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/live"
	"github.com/agbench/agbench/internal/privilege"
	"github.com/agbench/agbench/internal/table"
	"github.com/agbench/agbench/internal/target"
	"github.com/agbench/agbench/internal/workload/tpcc"
)

func init() { register(newTPCCCmd) }

func newTPCCCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "tpcc",
		Short: "TPC-C-derived OLTP workload (HammerDB's TPROC-C): build, run, check, drop",
		Long: `A TPC-C-derived OLTP workload, faithful to the TPC-C specification: nine tables in
schema tpcc, data made by the specification's rules (NURand with run-time constants,
a-strings, last-name syllables, 10% ORIGINAL), the five transactions as server-side
PL/pgSQL functions (--mode functions, as HammerDB runs them) or as statements sent from
the client (--mode client), picked from a shuffled deck of the 45/43/4/4/4 mix.

Targets: --cluster NAME (a local cluster made by agbench cluster create) or --primary URL
(any PostgreSQL server; credentials from the URL, PG* variables or ~/.pgpass); run also
takes --standby and --listener for its read-intent sessions.`,
	}
	c.AddCommand(tpccCheckCmd(a), tpccDropCmd(a)) // build, run: from the experiment registry
	return c
}

// tpccTarget is where a tpcc command connects: a local cluster or connection strings.
type tpccTarget struct {
	spec target.Spec
}

func (t *tpccTarget) flags(f *pflag.FlagSet) { experiment.TPCCTargetFlags(f, &t.spec, false) }

// resolved is a target with the primary's connection configuration.
type resolved struct {
	tgt     *target.Target
	primary *pgx.ConnConfig
}

func (t *tpccTarget) resolve(a *app) (*resolved, error) {
	tgt, err := target.Resolve(home(a), t.spec)
	if err != nil {
		return nil, err
	}
	cfg, err := experiment.TPCCPrimary(tgt)
	if err != nil {
		return nil, err
	}
	return &resolved{tgt: tgt, primary: cfg}, nil
}

func (r *resolved) connect(ctx context.Context) (*pgx.Conn, error) {
	conn, err := tpcc.Connect(ctx, r.primary)
	if err != nil {
		return nil, fmt.Errorf("connect to the primary: %w", err)
	}
	return conn, nil
}

// resolveChecked resolves the target and checks it (the primary is a primary, the database
// exists, the login is accepted and holds what the command needs) before anything is made
// or changed.
func (t *tpccTarget) resolveChecked(ctx context.Context, a *app, needs privilege.Needs) (*resolved, error) {
	r, err := t.resolve(a)
	if err != nil {
		return nil, err
	}
	if err := r.tgt.Check(ctx); err != nil {
		return nil, err
	}
	if err := privilege.Check(ctx, r.tgt, needs); err != nil {
		return nil, err
	}
	return r, nil
}

// open resolves and checks the target and connects to its primary.
func (t *tpccTarget) open(ctx context.Context, a *app, needs privilege.Needs) (*resolved, *pgx.Conn, error) {
	r, err := t.resolveChecked(ctx, a, needs)
	if err != nil {
		return nil, nil, err
	}
	conn, err := r.connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	return r, conn, nil
}

func init() { views["tpcc build"] = view{progress: buildProgress, render: renderBuild} }

// buildProgress shows a tpcc build's progress until the run has ended.
func buildProgress(a *app, e experiment.Experiment) (func(experiment.Event), func()) {
	return nil, live.ShowBuild(a.stderr, a.interactive, e.(*experiment.TPCCBuild).Progress)
}

// renderBuild says what the build made, and its notes.
func renderBuild(_ context.Context, a *app, e experiment.Experiment, _ *experiment.Outcome, _ error) error {
	s := e.(*experiment.TPCCBuild)
	rep, o := s.Report, s.Options
	ckpt := fmt.Sprintf("%.1fs", rep.Checkpoint.Seconds())
	if rep.CheckpointSkipped {
		ckpt = table.Absent + " (none: see the note)"
	}
	fmt.Fprintf(a.stdout, "built %d warehouses in %.1fs: %d rows loaded in %.1fs (%.0f rows/s, %d loaders), "+
		"indexes and analyze %.1fs, checkpoint %s, seed %d\n",
		o.Warehouses, rep.Total.Seconds(), rep.Rows, rep.Load.Seconds(), float64(rep.Rows)/rep.Load.Seconds(),
		o.Loaders, rep.Indexes.Seconds(), ckpt, s.Seed)
	for _, n := range rep.Notes {
		fmt.Fprintf(a.stdout, "note: %s\n", n)
	}
	return nil
}

func tpccCheckCmd(a *app) *cobra.Command {
	var t tpccTarget
	c := &cobra.Command{
		Use:   "check",
		Short: "Run the specification's consistency conditions (clause 3.3.2); exit 1 when one fails",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, conn, err := t.open(cmd.Context(), a, experiment.TPCCCheckNeeds())
			if err != nil {
				return err
			}
			defer conn.Close(context.WithoutCancel(cmd.Context()))
			return runCheck(cmd.Context(), a.stdout, conn)
		},
	}
	t.flags(c.Flags())
	return c
}

// runCheck runs the consistency conditions, prints them, and fails when one does not hold.
func runCheck(ctx context.Context, w io.Writer, conn *pgx.Conn) error {
	res, err := tpcc.Check(ctx, conn)
	return printCheck(w, res, err)
}

// printCheck prints the consistency conditions' outcome, and fails when one does not hold.
func printCheck(w io.Writer, res []tpcc.CheckResult, err error) error {
	if err != nil {
		return err
	}
	tw := table.NewWriter(w, table.Left)
	fmt.Fprintln(tw, "clause\tcondition\tviolations\ttime\tresult")
	var failed []string
	for _, r := range res {
		verdict := "ok"
		if r.Violations > 0 {
			verdict = "FAIL"
			failed = append(failed, r.Clause)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.2fs\t%s\n", r.Clause, r.Name, r.Violations, r.Took.Seconds(), verdict)
	}
	tw.Flush()
	if len(failed) > 0 {
		return fmt.Errorf("consistency conditions failed: %s", strings.Join(failed, ", "))
	}
	fmt.Fprintf(w, "all %d consistency conditions hold\n", len(res))
	return nil
}

func tpccDropCmd(a *app) *cobra.Command {
	var t tpccTarget
	var force bool
	c := &cobra.Command{
		Use:   "drop",
		Short: "Drop schema tpcc and everything in it (also a half-built one)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, conn, err := t.open(cmd.Context(), a, experiment.TPCCDropNeeds())
			if err != nil {
				return err
			}
			defer conn.Close(context.WithoutCancel(cmd.Context()))
			found, err := tpcc.Drop(cmd.Context(), conn, force)
			if err != nil {
				return err
			}
			if found {
				fmt.Fprintf(a.stdout, "dropped schema %s of database %s\n", tpcc.Schema, r.primary.Database)
			} else {
				fmt.Fprintf(a.stdout, "nothing to drop: database %s has no schema %s\n", r.primary.Database, tpcc.Schema)
			}
			return nil
		},
	}
	t.flags(c.Flags())
	c.Flags().BoolVar(&force, "force", false, "also drop a schema tpcc that agbench did not make")
	return c
}
