// Package drill drives the agbench binary's failover drills end to end, each on a cluster of
// its own (a drill fails its cluster over): planned, kill, freeze and partition faults on
// sync clusters, a drill through a cluster's listener, an observed failover of a hand-made
// cluster, the TPC-C drill, and the cluster commands and a drill under Patroni.
//
// Imports from agbench: only e2e/e2etest, internal/cluster, internal/cluster/clustertest, internal/drill, internal/render, internal/result.
package drill
