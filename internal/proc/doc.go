// Package proc owns the reading and parsing of the kernel's files: /proc (stat, meminfo,
// diskstats, net/dev, net/route, pressure, cpuinfo, uptime, the kernel's release; a process's stat
// line, its children by it, its command line, io and its threads' schedstat), /sys (a
// block device's inflight, the whole disk behind a device number) and the control groups'
// files (cpu.stat, memory.stat, io.stat, blkio's counters, CPU quotas, cpusets, their
// controllers and processes). Each file is parsed here once, for every package that needs its
// figures (the samplers, the cluster's postmasters and control groups, seeding, the
// readahead experiment, the recorded host); they keep their own logic (deltas, series,
// verdicts).
//
// Files are read through an FS, whose root is "/" on the machine and a folder of copies of
// real files in tests (testdata/root). Where github.com/prometheus/procfs parses a file with
// the figures and units agbench needs, FS uses it; it is imported here only. A file that
// cannot be read is an error that wraps the file system's, so that a caller can keep the
// figure absent, never 0.
//
// Imports from agbench: none.
package proc
