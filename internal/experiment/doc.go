// Package experiment owns an experiment as a value and the one recorder of a result's life.
//
// An experiment is what a measuring command asked for: a target, a sweep of steps, variants
// (--compare), repeats, sampling beside the load and the analysis at the end. The Recorder
// owns a result from start to end: a results folder that no other run shares, the metadata
// filled once, every step written atomically as it ends, the analysis, the incomplete mark
// on cancel or failure, and every write error (none is ever dropped).
//
// Load runs a workload through the runner's step engine (stress, scan, tpcc run): it starts
// the in-process listeners of a routing comparison, opens the sessions of the virtual users,
// starts the samplers and records where sessions landed; the analysis (internal/analyze)
// judges it, as it judges everything else of the result. Disk, Readahead and Seed run through
// the same Recorder but keep their own step loop, for the reason each one's doc comment gives.
//
// The command layer parses flags, validates them, shows progress and prints; this package
// never prints to a terminal and never reads flags or the environment.
//
// It must not import the command layer or the report (the report reads only result files).
//
// Imports from agbench: only internal/agerr, internal/analyze, internal/cluster,
// internal/diskio, internal/drill, internal/listener, internal/measure, internal/result,
// internal/runner, internal/sample, internal/seed, internal/target, internal/workload/....
package experiment
