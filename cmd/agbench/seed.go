package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/live"
	"github.com/agbench/agbench/internal/render"
	"github.com/agbench/agbench/internal/seed"
)

func init() {
	views["seed"] = view{progress: seedProgress, render: renderSeed, command: func(a *app, c *cobra.Command) {
		c.Annotations = map[string]string{noConnStrings: "seed makes a standby's data folder and starts its server on this machine, " +
			"and joins it to the topology of an agbench cluster (--cluster NAME); for a cluster made by hand, add a standby with pg_basebackup -R"}
		c.AddCommand(seedHistoryCmd(a), seedDropCmd(a))
	}}
}

// seedProgress shows each seeding's progress and, when variants are not compared, its
// table once it has ended.
func seedProgress(a *app, _ experiment.Experiment) (func(experiment.Event), func()) {
	show := &live.Seed{Stdout: a.stdout, Stderr: a.stderr, Interactive: a.interactive}
	return func(e experiment.Event) {
		show.Event(e)
		if e, ok := e.(experiment.SeedEnded); ok && e.Err == nil && !e.Compare {
			render.Seeding(a.stdout, &e.Report.Seeding)
		}
	}, func() {}
}

// renderSeed prints the comparison's table and where the result went.
func renderSeed(_ context.Context, a *app, e experiment.Experiment, out *experiment.Outcome, runErr error) error {
	s := e.(*experiment.Seed)
	if len(out.Result.Steps) == 0 && runErr != nil {
		return runErr
	}
	if s.Compare() {
		render.SeedCompare(a.stdout, out.Result, seed.Labels(s.All()))
	}
	if out.Path != "" {
		fmt.Fprintf(a.stdout, "\nresult: %s\n", out.Path)
	}
	return runErr
}

func seedHistoryCmd(a *app) *cobra.Command {
	var name string
	var asJSON bool
	c := &cobra.Command{
		Use:   "history",
		Short: "Every seeding of a cluster: start, end, method, compression, size, rate, state, failure reason, attempts",
		Long: `Every seeding of the cluster, oldest first, like sys.dm_hadr_automatic_seeding: start
and end, method, compression, size streamed, bytes on the wire, rate, state (seeding,
completed, failed, interrupted, removed), failure reason and attempts.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			topo, err := loadCluster(a, name)
			if err != nil {
				return err
			}
			recs, err := seed.History(topo.Dir)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				if recs == nil {
					recs = []seed.Record{}
				}
				return enc.Encode(recs)
			}
			if len(recs) == 0 {
				fmt.Fprintf(a.stdout, "no seeding on cluster %s yet\n", topo.Name)
				return nil
			}
			render.SeedHistory(a.stdout, recs)
			return nil
		},
	}
	c.Flags().StringVar(&name, "cluster", "lab", "cluster name")
	c.Flags().BoolVar(&asJSON, "json", false, "print the records as JSON")
	return c
}

func seedDropCmd(a *app) *cobra.Command {
	var clusterName, name string
	c := &cobra.Command{
		Use:   "drop",
		Short: "Remove a standby: stop it, drop its slot, delete its data folder, take it out of the topology",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			topo, err := loadCluster(a, clusterName)
			if err != nil {
				return err
			}
			if name == "" {
				return agerr.BadInputf("--name: which standby to drop (nodes: %s)", strings.Join(topo.NodeNames(), ", "))
			}
			if err := seed.Drop(cmd.Context(), topo, name); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "dropped %s from cluster %s\n", name, topo.Name)
			return nil
		},
	}
	c.Flags().StringVar(&clusterName, "cluster", "lab", "cluster name")
	c.Flags().StringVar(&name, "name", "", "standby to drop")
	return c
}
