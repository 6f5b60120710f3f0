package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/links"
)

// The links with latency that `cluster create --link-latency` asks for are served by
// `agbench cluster links --name NAME`, which the cluster package runs in the background
// around the nodes (its log is links.log in the cluster's folder, its PID in the topology).

func clusterLinksCmd(a *app) *cobra.Command {
	var name string
	c := &cobra.Command{
		Use:   "links",
		Short: "Serve the cluster's links with latency (started by create and start, stopped by stop and destroy)",
		Long: `Serve the links with latency of a cluster made with --link-latency: one relay (the
Toxiproxy Go package, embedded) in front of each node, adding the latency to every round trip
of the clients' and the standbys' replication connections, until stopped (SIGTERM). cluster
create and cluster start run it in the background; there is seldom a reason to run it by hand.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			topo, err := loadCluster(a, name)
			if err != nil {
				return err
			}
			if topo.Links == nil {
				return fmt.Errorf("cluster %s has no links (create it with --link-latency)", topo.Name)
			}
			return links.Serve(cmd.Context(), linksOf(topo), links.Shape{Latency: time.Duration(topo.Links.Latency), Bandwidth: topo.Links.Bandwidth})
		},
	}
	c.Flags().StringVar(&name, "name", "lab", "cluster name")
	return c
}

func linksOf(topo *cluster.Topology) []links.Link {
	var out []links.Link
	for _, s := range topo.LinkSpecs() {
		out = append(out, links.Link{Name: s.Name, Listen: s.Listen, Upstream: s.Upstream})
	}
	return out
}
