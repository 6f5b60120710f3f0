// Package report owns what a person reads of agbench's results: the tables shaped like the
// articles' (terminal and CSV), the self-contained HTML report with its charts (drawn here as
// inline SVG: no script, no network), and the comparison of two runs or variants against the
// run-to-run spread, in the terminal (`agbench report`'s tables, `agbench compare`) as in
// HTML. Runs of several studies are shown side by side, but their variants are compared
// only within one study's target (Studies): never one cluster's variant against another's.
// What it says that a command also prints of one result (a drill's sync-gap sentence,
// a step's faults) it takes from internal/render, so that the two cannot disagree. Write is
// the one writer of a report (tables, page, CSVs, the "report:" line) for the report
// command and a study alike.
//
// It reads only result files (internal/result) and keys everything on what a result holds
// (steps, variants, counters, series, analysis), never on a list of workload names. It must
// not import the runner, workloads, samplers, the cluster or the command layer.
//
// Imports from agbench: only internal/agerr, internal/analyze, internal/atomicfile, internal/render, internal/result,
// internal/stats, internal/table, internal/units.
package report
