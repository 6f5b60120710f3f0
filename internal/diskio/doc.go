// Package diskio owns the storage load tester behind `agbench disk`: the test files it
// creates and marks as its own, aligned O_DIRECT buffers, the IO engines (io_uring and
// synchronous pread/pwrite), access patterns, read/write mixes, rate limits, warm-up,
// presets for database IO shapes, checksum verification, DiskSpd's command-line syntax,
// the OS counters read around each step (/proc/diskstats of the device behind the file,
// /proc/pressure/io, /proc/stat, the tester's own rusage), and the tables that show the
// knee marks of a sweep and each step's Little's-law check (both computed by internal/analyze,
// once for the terminal and the result alike).
//
// It never prints and never reads flags; the command layer does. It must not import
// cmd/agbench, the cluster, the runner, the workloads or the report.
//
// Imports from agbench: only internal/agerr, internal/proc, internal/result, internal/sample, internal/table,
// internal/units.
package diskio
