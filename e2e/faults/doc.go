// Package faults drives the agbench binary through faults on clusters of their own: hand-made
// clusters (initdb, pg_basebackup, an ordinary login) whose primary fails over, whose
// standbys stop, freeze or are promoted mid-run, synchronous standbys that go away, and
// standbys whose replay is held back for the stale-read probes. Each test that injects a
// fault owns its cluster and runs beside the others; the tests that change nothing share one
// hand-made cluster (TestHandmade).
//
// Imports from agbench: only e2e/e2etest, internal/analyze, internal/cluster, internal/cluster/clustertest, internal/listener, internal/result, internal/target, internal/workload/tpcc.
package faults
