// Package diskio owns the storage load tester behind `agbench disk`: the test files it
// creates and marks as its own, aligned O_DIRECT buffers, the IO engines (io_uring and
// synchronous pread/pwrite), access patterns, read/write mixes, rate limits, warm-up,
// presets for database IO shapes, checksum verification, DiskSpd's command-line syntax,
// the OS counters read around each step (/proc/diskstats of the device behind the file,
// /proc/pressure/io, /proc/stat, the tester's own rusage), and the writing of a run into
// the result: its figures are internal/result/diskrun's types (the result's disk
// sections), which internal/render prints, with the knee marks and each step's
// Little's-law check that internal/analyze computes once for the terminal and the result.
//
// It never prints and never reads flags; the command layer does. It must not import
// cmd/agbench, the cluster, the runner, the workloads or the report.
//
// Imports from agbench: only internal/agerr, internal/proc, internal/result,
// internal/result/diskrun, internal/sample, internal/units.
package diskio
