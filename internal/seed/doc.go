// Package seed owns adding a standby to a local cluster by seeding, the PostgreSQL version of
// an availability group's direct seeding and backup/restore (reference/ag-direct-seeding-2016):
// direct (pg_basebackup streamed into the new data folder, WAL streamed beside it through the
// new standby's slot) or backup-restore (a tar backup in a backup folder, optionally compressed
// on the server, then extracted into the new data folder), each followed by start, catch-up
// and join. It times each phase, polls pg_stat_progress_basebackup and the walsender's wait
// event for live progress (bytes, rate, time left, what it waits on), measures CPU of the
// sender and the receiver and device bytes per phase, keeps a seeding history in the cluster's
// folder, and makes a database of a given size for the experiment.
//
// It builds on internal/cluster's standby primitives and internal/sample's OS parsers and
// writes figures in internal/result's types. It never prints: progress goes to a callback.
// It must not import the runner, workloads, the listener, analyze or report.
//
// Imports from agbench: only internal/agerr, internal/atomicfile, internal/cluster,
// internal/proc, internal/result, internal/sample, internal/units.
package seed
