package main

import (
	"os"

	"github.com/agbench/agbench/internal/cluster"
)

// The listener that `cluster create --listener` starts runs as `agbench listener --cluster
// NAME` in the background, started and stopped by the cluster package with the nodes.

// selfBinary is the agbench binary to run in the background ($AGBENCH_SELF for tests,
// whose own binary is the test program).
func selfBinary(a *app) (string, error) {
	if s := a.getenv("AGBENCH_SELF"); s != "" {
		return s, nil
	}
	return os.Executable()
}

// clusterSelf is the agbench that serves a cluster's listener and links in the background,
// and the home it finds the cluster under.
func clusterSelf(a *app) (cluster.Self, error) {
	bin, err := selfBinary(a)
	return cluster.Self{Binary: bin, Home: home(a)}, err
}
