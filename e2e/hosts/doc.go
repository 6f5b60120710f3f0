// Package hosts drives the agbench binary against nodes whose hosts are read from Debian's
// node_exporter, as a user runs it, and checks what the analysis says of each host: that a
// host's saturated device is named in what saturated and the control host beside it is
// not, that a host whose exporter went away is shown absent with the reason, and that a
// machine whose CPU the test saturates, carrying every node of a --netns cluster, is named
// once as saturated where /proc/stat says it was. Every exporter on one machine reads the
// same /proc, so what differs between the hosts is what the tests make differ: each
// exporter watches a loop device of its own, which the test keeps idle or saturates. On a
// cluster whose nodes are hosts of their own, a real Prometheus server scrapes each node's
// exporter at its address, and the figures read through it are checked against the test's
// own direct reads of the same exporters.
//
// Imports from agbench: only e2e/e2etest, internal/analyze, internal/cgroup, internal/cluster, internal/cluster/clustertest, internal/hostmetrics, internal/hostmetrics/hostmetricstest, internal/proc, internal/result.
package hosts
