// Package sample owns the samplers that run beside a workload and measure the layers under
// it: the operating system (/proc/diskstats for the devices behind the data directories,
// /proc/stat CPU, /proc/pressure, /proc/net/dev, the load generator's own CPU) and, per
// PostgreSQL node, the database (wait events, pg_stat_database, pg_stat_io, checkpoints,
// WAL written, replication lag) and, for a server on this host, its processes' CPU from
// /proc (servercpu.go); and other hosts, from their Prometheus node_exporter, directly or
// through a Prometheus server (remotehost.go, through internal/hostmetrics).
//
// The kernel's files are read and parsed by internal/proc (through OSConfig.Kernel, a copy
// of them in tests); samplers turn two readings into rates over the interval between them. Samplers never slow the workload: cheap reads, one
// connection per node, and they only ever read.
//
// It must not import the runner, workloads, the analysis or the report.
//
// Imports from agbench: only internal/cgroup, internal/hostmetrics, internal/proc, internal/result.
package sample
