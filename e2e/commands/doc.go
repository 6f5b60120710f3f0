// Package commands drives the agbench binary's commands end to end against real servers, as
// a user runs them: cluster create/status/failover/stop/start/destroy (with links and a
// listener), stress, scan, tpcc, listener, seed, readahead and run. The tests that do not
// change their cluster's shape share one (sharedCluster), each in a database of its own; the
// others make their own. All run side by side.
//
// Imports from agbench: only e2e/e2etest, internal/analyze, internal/cluster, internal/cluster/clustertest, internal/listener, internal/report/reporttest, internal/result, internal/seed, internal/target, internal/workload/readahead, internal/workload/tpcc.
package commands
