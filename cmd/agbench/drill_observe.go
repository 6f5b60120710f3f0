package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/agbench/agbench/internal/drill"
	"github.com/agbench/agbench/internal/experiment"
)

// runObserve runs `drill --fault observe` on a cluster given by connection strings: no
// cluster of agbench's is loaded or locked, and nothing but SQL (and Patroni's REST API,
// when given) reaches the servers.
func runObserve(cmd *cobra.Command, a *app, f *drillFlags, ends *drill.Endpoints) error {
	var names []string
	for _, n := range ends.Nodes {
		names = append(names, n.Name)
	}
	cfg := map[string]any{"fault": f.o.Fault, "cycles": f.o.Cycles, "vus": f.o.Writers, "read_vus": f.o.Readers,
		"between": f.o.Between.String(), "commit_wait": f.o.CommitWait.String(), "keep": f.o.Keep,
		"nodes": strings.Join(names, ","), "listener": ends.Listener != "", "patroni": len(ends.Patroni) > 0}
	if len(ends.Patroni) == 0 {
		cfg["observe_wait"] = f.o.ObserveWait.String()
	}
	d := &experiment.Drill{Version: version, Args: cmdArgs(cmd), Results: f.results, Endpoints: ends, Options: f.o, Config: cfg}
	return runDrillExperiment(cmd, a, d)
}
