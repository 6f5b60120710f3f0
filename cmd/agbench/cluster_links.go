package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/links"
)

// The links with latency that `cluster create --link-latency` asks for are served by
// `agbench cluster links --name NAME`, run in its own session in the background (its log is
// links.log in the cluster's folder, its PID in the topology): create starts it once the
// primary runs, before any standby streams; `cluster start` starts it before the nodes,
// `cluster stop` stops it after them, and `cluster destroy` stops it with everything else.

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

// startClusterLinks starts the links process of topo in the background, waits until every
// link listens, and records its PID.
func startClusterLinks(ctx context.Context, a *app, topo *cluster.Topology) error {
	if topo.Links == nil || topo.LinksAlive() {
		return nil
	}
	self, err := selfBinary(a)
	if err != nil {
		return err
	}
	topo.Links.LogFile = filepath.Join(topo.Dir, "links.log")
	if err := topo.Save(); err != nil { // the links process reads the topology
		return err
	}
	logf, err := os.OpenFile(topo.Links.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(self, "cluster", "links", "--name", topo.Name)
	cmd.Env = append(os.Environ(), "AGBENCH_HOME="+home(a))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start links: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	ready := make(chan error, 1)
	go func() { ready <- links.WaitListening(ctx, linksOf(topo), listenerStartTimeout) }()
	select {
	case err := <-ready:
		if err != nil {
			_ = cmd.Process.Kill()
			return fmt.Errorf("%w: %s", err, tail(topo.Links.LogFile))
		}
	case werr := <-exited:
		return fmt.Errorf("links exited (%v): %s", werr, tail(topo.Links.LogFile))
	}
	topo.Links.PID = cmd.Process.Pid
	return topo.Save()
}
