// Package report owns what a person reads of agbench's results: the tables shaped like the
// articles' (terminal and CSV), the self-contained HTML report with its charts (drawn here as
// inline SVG: no script, no network), and the comparison of two runs or variants against the
// run-to-run spread.
//
// It reads only result files (internal/result) and keys everything on what a result holds
// (steps, variants, counters, series, analysis), never on a list of workload names. It must
// not import the runner, workloads, samplers, the cluster or the command layer.
//
// Imports from agbench: only internal/analyze, internal/atomicfile, internal/render, internal/result,
// internal/stats, internal/table, internal/units.
package report
