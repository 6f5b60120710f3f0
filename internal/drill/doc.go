// Package drill owns failover drills: what a failover costs, measured on a local cluster that
// agbench made. A drill runs cycles; in each, a ledger workload runs (writers commit rows with
// unique ids and remember every commit the server acknowledged; readers read with read
// intent), a fault is injected (a planned failover; SIGKILL of the primary's postmaster;
// SIGSTOP of all its processes, freeze.go; its replication connections cut, partition.go),
// the cluster fails over (internal/cluster's failover, as a DBA would run it), the load goes
// on, and then the checks run: every acknowledged commit is on the new primary (lost ids are
// listed; commits sent but never acknowledged are counted apart, in doubt), exactly one node
// accepts writes, and the old primary is back as a streaming standby. Each cycle's figures are
// a step of the result (result.DrillCycle), their sum the run's (result.DrillRun).
//
// Faults go only to servers this agbench started: the cluster package checks the postmaster's
// pid against the topology, the data folder and the binary before any signal. Once a fault is
// injected the failover runs to its end, even on Ctrl-C, so that the cluster is left whole (a
// primary and streaming standbys) or the run says exactly what is left; a frozen primary or
// a cut link is resumed or healed instead when Ctrl-C comes before the failover begins.
//
// On a cluster under Patroni (patroni.go) agbench injects the fault and only watches: Patroni's
// REST API says when, and whom, Patroni promoted (or that it restarted the primary in place),
// a split brain is looked for before agbench heals what it broke (it starts a killed Patroni
// again), and Patroni's timing is recorded. The observe fault (observe.go, endpoints.go) runs
// on any cluster through connection strings only: it injects nothing, and waits for the
// user's failover, or asks Patroni for a switchover when given its REST APIs.
//
// It never prints and never reads flags or the environment.
//
// Imports from agbench: only internal/agerr, internal/cluster, internal/links, internal/measure,
// internal/result, internal/routing, internal/runner, internal/stats, internal/target,
// internal/units, internal/workload/tpcc.
package drill
