// Package tpcc owns agbench's TPC-C-derived OLTP workload: the data generators of the TPC-C
// specification (clause 4.3), the schema and its parallel binary-COPY loader, the five
// transactions (clause 2.4-2.8) both as server-side PL/pgSQL functions and as statements sent
// from the client, the shuffled deck of the transaction mix (clause 5.2.4.2), the consistency
// conditions (clause 3.3.2), the server-side counters used to cross-check NOPM and TPM, and
// the emulated terminals of clause 5.2.5 with the transaction monitor that serves them over a
// pool of sessions (terminal.go, monitor.go).
//
// It never prints or logs: progress goes to a callback and failures are returned as errors.
// It must not import the runner, the cluster, the listener or the report packages; it takes
// its transaction monitor's histograms (monitor.go) from internal/measure, as the runner's.
//
// Imports from agbench: only internal/agerr, internal/measure, internal/result, internal/segment,
// internal/workload, internal/workload/pgops.
package tpcc
