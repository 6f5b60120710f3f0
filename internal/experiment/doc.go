// Package experiment owns the one contract of every kind of experiment and the one
// recorder of a result's life.
//
// Every kind — load (stress, scan, tpcc run: Load), tpcc build, Disk, Seed, Readahead,
// Drill — implements Experiment: Validate checks the spec without connecting, Run runs it
// with the run's Recorder and an event stream for progress, Sections names the result
// sections it writes; Analyser and Analysed are optional capabilities. Run (the function)
// is the one life of a result: it validates, lets the kind take its recorder when what it
// needs is made (bad input found while preparing leaves no folder), marks the result
// complete or incomplete, analyses it and writes it a last time. The registry (Register,
// Registered) lists the kinds, from which the command layer makes its commands: a kind
// declares its flags and help (Meta.Flags) and builds its spec from them, so that a
// command and a study's experiment make the same spec from the same flags. A Study is a
// plan's experiments made into specs that way (NewStudy) and checked whole before any
// runs; the registry is the plan's Catalog. A Study is itself an Experiment: its Run makes
// the study's folder, creates and destroys its cluster through the cluster package (also
// after Ctrl-C), runs each experiment's spec through the command layer's hook, logs the
// commands and sends its progress as events. ClusterCreate is cluster create's flags read
// into cluster.Create's options, the one reading that the command and a plan's cluster
// target (ClusterOptions) share.
//
// The Recorder owns a result from start to end: a results folder that no other run shares,
// the metadata filled once, every step written atomically as it ends, the analysis, the
// incomplete mark on cancel or failure, and every write error (none is ever dropped).
//
// Load runs a workload through the runner's step engine: it starts the in-process
// listeners of a routing comparison, opens the sessions of the virtual users, starts the
// samplers and records where sessions landed. Disk, Readahead, Seed and Drill keep their
// own loop, for the reason each one's doc comment gives.
//
// The command layer parses the flags, shows progress and prints; this package declares its
// kinds' flags on the flag set it is given, never prints to a terminal and never reads the
// command line or the environment (agbench's home comes in the Setup).
//
// It must not import the command layer or the report (the report reads only result files).
//
// Imports from agbench: only internal/agerr, internal/analyze, internal/atomicfile,
// internal/cgroup, internal/cluster, internal/diskio, internal/drill, internal/freeport,
// internal/hostmetrics, internal/links, internal/listener, internal/measure, internal/plan,
// internal/privilege, internal/result, internal/routing, internal/runner, internal/sample,
// internal/seed, internal/segment, internal/target, internal/units, internal/workload/....
package experiment
