// Package routing owns read-only routing lists and the choice of a target node for a
// session: parsing SQL Server's READ_ONLY_ROUTING_LIST syntax, for example
// (('standby1','standby2'),'primary'), with errors that name the position of the fault,
// and choosing a node from the nodes' health, roles and replay lag.
//
// Meaning, as in SQL Server: entries are tried in order; one level of nested parentheses
// is a load-balanced set whose healthy members take sessions in turn (round-robin); when
// no member of an entry is available the next entry is tried; the primary serves read
// intent only when it is listed. A session without read intent always goes to the
// primary. When nothing in the list is available, Choose returns a *NoTargetError that
// names the list and why each node was skipped: never a silent fallback.
//
// It is pure logic: no network, no clock of its own, no logging. It imports nothing from
// agbench and must not import the listener, the cluster or any workload.
//
// Imports from agbench: none.
package routing
