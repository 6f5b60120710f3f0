package main

import (
	"net"
	"os"
	"strconv"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
)

// The listener that `cluster create --listener` starts runs as `agbench listener --cluster
// NAME` in the background, started and stopped by the cluster package with the nodes.

// clusterListenerInfo derives the listener's ports from --listener ADDR: the read-only
// port is the next port and the metrics port the one after.
func clusterListenerInfo(addr string) (*cluster.ListenerInfo, error) {
	host, port, err := net.SplitHostPort(addr)
	p, perr := strconv.Atoi(port)
	if err != nil || perr != nil || p < 1 || p > 65533 {
		return nil, agerr.BadInputf("--listener %q: want host:port with a port below 65534 (the next two ports take read-only sessions and metrics)", addr)
	}
	at := func(d int) string { return net.JoinHostPort(host, strconv.Itoa(p+d)) }
	return &cluster.ListenerInfo{Listen: at(0), ReadOnlyListen: at(1), Metrics: at(2)}, nil
}

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
