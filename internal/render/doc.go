// Package render owns every table and sentence agbench makes from a result: the tables and
// lines the commands print after a run (load, tpcc, disk, drill, seed, readahead, stale
// reads), the lines under them (faults, warnings, where sessions landed, the analysis),
// live state (`cluster status`, the listener's banner, from the records internal/status
// declares; the seed history), and the sentences the HTML report and `agbench compare`
// share with the terminal, so that the two cannot say different things about one result.
// internal/table is its terminal grid.
//
// It reads results (internal/result, and the disk sections' types in
// internal/result/diskrun), the analysis's findings (internal/analyze), the records of live
// state (internal/status, a leaf of types that the engines fill), and values the commands
// hand it; it never imports an engine (runner, workloads, cluster,
// listener, diskio, seed, drill, sample), so that whatever it prints can be printed again
// from a result file alone. The HTML report (internal/report) takes its shared sentences
// from here; render never imports the report.
//
// Imports from agbench: only internal/analyze, internal/result, internal/result/diskrun,
// internal/stats, internal/status, internal/table, internal/units.
package render
