// Package readahead owns the cold-cache prefetch experiment of the read-ahead article
// (reference/read-ahead-reads.txt) for PostgreSQL: the article's two tables, its queries (a
// range scan, a full scan, and a join as a nested loop and as a bitmap heap scan), each run
// on a cold cache with prefetching off and on, interleaved and repeated, and "STATISTICS IO"
// for each run: buffer hits, reads, IO operations and their average size, IO read time, the
// plan node that ran and the elapsed time.
//
// It also owns the machinery the experiment needs on the host: a private loop device for a
// tablespace whose read_ahead_kb it controls (loopdev.go), a blkio throttle on that device
// (throttle.go), and evicting relation files from the page cache (cold.go).
//
// The server is reached through the Server interface, which internal/experiment implements
// over an agbench cluster: this package must not import internal/cluster, the runner or the
// report, and it never prints (progress goes to a writer it is given).
//
// Imports from agbench: only internal/agerr, internal/measure, internal/proc, internal/result,
// internal/sample, internal/stats.
package readahead
