// Package proc owns the reading and parsing of the kernel's files: /proc (the machine's
// CPU times in /proc/stat; a process's line in /proc/<pid>/stat, its children by it, and
// its command line), /sys and the control groups' files. Each file is parsed here once,
// for every package that needs its figures (the samplers, the cluster's postmasters and
// Patroni, seeding's sender and receiver); they keep their own logic (deltas, series,
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
