package result

import "strings"

// Names of the figures (Step.Series and Step.Counters keys) that one package writes and
// another reads without being allowed to import it: the samplers' (internal/sample), the
// storage tester's (internal/diskio) and TPC-C's read-intent counters, read by
// internal/analyze and internal/report. Names with parts are built and taken apart only by
// the functions here, never by hand with string prefixes.

// Prefixes of the samplers' figures.
const (
	// PGPrefix starts every figure of the database sampler: "pg.<node>.<figure>".
	PGPrefix = "pg."
	// DiskPrefix starts every figure of a block device: "disk.<device>.<figure>".
	DiskPrefix = "disk."
	// OSCPUPrefix starts the machine's CPU shares: "os.cpu.<mode>".
	OSCPUPrefix = "os.cpu."

	pgWait    = "wait."
	pgStandby = "standby."
)

// Figures of the OS sampler read by others.
const (
	OSCPUBusy  = OSCPUPrefix + "busy"  // share of the machine's CPU time not idle (0..1)
	OSCPUSteal = OSCPUPrefix + "steal" // share stolen by the hypervisor (0..1)
	OSCPUIRQ   = OSCPUPrefix + "irq"   // share in hard and soft interrupts, charged to no process (0..1)
	// OSCPULoadGenSetBusy is the busy share of the CPUs the load generator may run on (its
	// affinity), OSCPUOtherSetBusy of the machine's other CPUs: kept only when the affinity
	// leaves some out (taskset).
	OSCPULoadGenSetBusy = OSCPUPrefix + "loadgen_set_busy"
	OSCPUOtherSetBusy   = OSCPUPrefix + "other_set_busy"
	// OSSelfRunDelay is the time the load generator's threads waited for a CPU while
	// runnable, per second (schedstat's run-queue wait): it wanted CPU and did not get it.
	OSSelfRunDelay = "os.self.run_delay"
	OSMemTotal     = "os.mem_total_bytes"
	OSMemAvailable = "os.mem_available_bytes"
)

// Figures of a PostgreSQL node, after "pg.<node>." (PGName).
const (
	PGDatabaseBytes      = "database_bytes"
	PGSharedBuffersBytes = "shared_buffers_bytes"
	PGIOReadMBps         = "io_read_mb_per_s"
	PGIOWriteMBps        = "io_write_mb_per_s"
	PGWALMBps            = "wal_mb_per_s"
	// PGServerCPUCores is the CPU the server used over the window, in cores: its postmaster
	// and all its processes, from /proc (a server on this host only).
	PGServerCPUCores = "server_cpu_cores"
)

// Figures of a standby seen from its primary, after "pg.<node>.standby.<standby>."
// (PGStandbyName).
const (
	PGReplayLagSeconds = "replay_lag_s"
	PGReplayLagGrowth  = "replay_lag_growth" // seconds of lag gained per second of the window
	// PGReplayLagWithin is how far a lag from positions may be from the true one, in seconds
	// (the interval of the primary's readings around the moment it was at the standby's
	// position, or half of it).
	PGReplayLagWithin = "replay_lag_within_s"
)

// Wait classes of the database sampler ("pg.<node>.wait.<class>", WaitEvent.Class): how a
// PostgreSQL wait event reads to someone who knows SQL Server's wait stats.
const (
	WaitCPU      = "cpu"       // active with no wait event: on a CPU or runnable
	WaitLog      = "log"       // IO WALWrite, WALSync, WALInit*; LWLock WALWrite, WALInsert, WALBufMapping
	WaitDataRead = "data_read" // IO DataFileRead, DataFilePrefetch
	WaitOtherIO  = "other_io"  // any other IO event
	WaitLWLock   = "lwlock"    // lightweight locks other than the WAL's
	WaitLock     = "lock"      // heavyweight locks: relation, tuple, transactionid ...
	WaitClient   = "client"    // ClientRead/ClientWrite, and sessions idle in a transaction
	WaitSyncRep  = "sync_rep"  // IPC SyncRep: commit waiting for a synchronous standby
	WaitOther    = "other"     // Timeout, Activity, BufferPin, Extension, other IPC
)

// Figures of a block device, after "disk.<device>." (DiskName).
const (
	DiskIOPS      = "iops"
	DiskReadMBps  = "read_mbps"
	DiskWriteMBps = "write_mbps"
	DiskAwaitMs   = "await_ms"
	DiskQueue     = "queue"
	DiskUtil      = "util" // share of the window the device was busy (0..1)
)

// Counters of the storage tester (internal/diskio) read by others: the device under test
// and the machine's CPU, from /proc around each step.
const (
	DeviceIOPS         = "device_iops"
	DeviceMBps         = "device_mb_per_s"
	DeviceReadAwaitMs  = "device_read_await_ms"
	DeviceWriteAwaitMs = "device_write_await_ms"
	DeviceAvgQueue     = "device_avg_queue"
	DeviceUtil         = "device_util"
	MachineCPUUser     = "machine_cpu_user"
	MachineCPUSystem   = "machine_cpu_system"
	MachineCPUIOWait   = "machine_cpu_iowait"
	MachineCPUSteal    = "machine_cpu_steal"
)

// Counters of any workload read by others.
const (
	// MBps is megabytes (10^6) per second the workload moved.
	MBps = "mb_per_s"
	// ReadTxOnStandby and ReadTxOnPrimary count the read-intent transactions of a step by
	// where they ran (TPC-C with --read-intent).
	ReadTxOnStandby = "read_tx_on_standby"
	ReadTxOnPrimary = "read_tx_on_primary"
	// BufferHits and BufferReads are the servers' shared-buffer hits and reads (8 kB pages)
	// during a step; ServerMBps is both together in MB per second of the window.
	BufferHits  = "buffer_hits"
	BufferReads = "buffer_reads"
	ServerMBps  = "server_mb_per_s"
)

// TPC-C's figures of a step, written by internal/workload/tpcc (whose Counter* names are
// these) and read by the tables of internal/render.
const (
	TPCCNOPM          = "nopm"
	TPCCTPM           = "tpm"
	TPCCServerNOPM    = "server_nopm"
	TPCCServerTPM     = "server_tpm"
	TPCCPrimaryTPM    = "client_primary_tpm"
	TPCCRolledBack    = "rolled_back_new_orders"
	TPCCLagBytesMax   = "replay_lag_max_bytes"
	TPCCLagSecondsMax = "replay_lag_max_seconds"
)

// TPCCOps are the five TPC-C transactions' names in Step.Ops (HammerDB's short names), in
// the order of the specification (clauses 2.4 to 2.8): New-Order, Payment, Order-Status,
// Delivery, Stock-Level.
var TPCCOps = [5]string{"NEWORD", "PAYMENT", "OSTAT", "DELIVERY", "SLEV"}

// SeriesNodeName turns a node (or standby) name into the form used in names: no dots, so
// that a name splits back into its parts.
func SeriesNodeName(name string) string { return strings.ReplaceAll(name, ".", "_") }

// PGName is the name of a figure of a PostgreSQL node: "pg.<node>.<figure>".
func PGName(node, figure string) string {
	return PGPrefix + SeriesNodeName(node) + "." + figure
}

// PGWaitFigure is a node's figure of its mean number of sessions in a wait class,
// "wait.<class>"; PGWaitName is its whole name, "pg.<node>.wait.<class>".
func PGWaitFigure(class string) string { return pgWait + class }

// PGWaitName is the name of a node's mean number of sessions in a wait class:
// "pg.<node>.wait.<class>".
func PGWaitName(node, class string) string { return PGName(node, PGWaitFigure(class)) }

// PGStandbyFigure is a node's figure of one of its standbys, "standby.<standby>.<figure>";
// PGStandbyName is its whole name.
func PGStandbyFigure(standby, figure string) string {
	return pgStandby + SeriesNodeName(standby) + "." + figure
}

// PGStandbyName is the name of a figure of a standby seen from its primary node:
// "pg.<node>.standby.<standby>.<figure>".
func PGStandbyName(node, standby, figure string) string {
	return PGName(node, PGStandbyFigure(standby, figure))
}

// ParsePGName takes "pg.<node>.<figure>" apart; figure may hold dots ("wait.lock",
// "standby.s1.replay_lag_s").
func ParsePGName(name string) (node, figure string, ok bool) { return parseNodeName(name, PGPrefix) }

// parseNodeName takes "<prefix><node>.<figure>" apart.
func parseNodeName(name, prefix string) (node, figure string, ok bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return "", "", false
	}
	node, figure, ok = strings.Cut(rest, ".")
	if !ok || node == "" || figure == "" {
		return "", "", false
	}
	return node, figure, true
}

// ParsePGWait takes "pg.<node>.wait.<class>" apart.
func ParsePGWait(name string) (node, class string, ok bool) {
	node, figure, ok := ParsePGName(name)
	if !ok {
		return "", "", false
	}
	class, ok = strings.CutPrefix(figure, pgWait)
	if !ok || class == "" {
		return "", "", false
	}
	return node, class, true
}

// ParsePGStandby takes "pg.<node>.standby.<standby>.<figure>" apart.
func ParsePGStandby(name string) (node, standby, figure string, ok bool) {
	node, rest, ok := ParsePGName(name)
	if !ok {
		return "", "", "", false
	}
	if rest, ok = strings.CutPrefix(rest, pgStandby); !ok {
		return "", "", "", false
	}
	standby, figure, ok = strings.Cut(rest, ".")
	if !ok || standby == "" || figure == "" {
		return "", "", "", false
	}
	return node, standby, figure, true
}

// DiskName is the name of a figure of a block device: "disk.<device>.<figure>".
func DiskName(device, figure string) string { return DiskPrefix + device + "." + figure }

// ParseDiskName takes "disk.<device>.<figure>" apart (the figure is after the last dot).
func ParseDiskName(name string) (device, figure string, ok bool) {
	rest, ok := strings.CutPrefix(name, DiskPrefix)
	if !ok {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, '.')
	if i <= 0 || i == len(rest)-1 {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

// HostPrefix starts every figure of a node's modelled host (its control group, written by
// internal/sample's host sampler): "host.<node>.<figure>" (HostName).
const HostPrefix = "host."

// Figures of a node's modelled host, after "host.<node>.".
const (
	HostCPUCores       = "cpu_cores"           // CPU used, in cores (CPU seconds per second)
	HostCPUBudget      = "cpu_budget_cores"    // the group's CPU quota in cores
	HostCPUOfBudget    = "cpu_of_budget"       // cpu_cores / cpu_budget_cores (0..1)
	HostThrottledShare = "throttled_share"     // share of quota periods in which it was throttled
	HostThrottledSec   = "throttled_s_per_s"   // seconds its runnable tasks waited for quota, per second
	HostMemoryBytes    = "memory_bytes"        // memory charged to the group, page cache included
	HostPageCacheBytes = "page_cache_bytes"    // the group's page cache
	HostMemoryBudget   = "memory_budget_bytes" // the group's memory limit
	// IO on the disk that holds the node's data, when its host limits IO, and the limits.
	HostReadBPS         = "read_bytes_per_s"
	HostWriteBPS        = "write_bytes_per_s"
	HostReadIOPS        = "read_iops"
	HostWriteIOPS       = "write_iops"
	HostReadBPSBudget   = "read_bytes_per_s_budget"
	HostWriteBPSBudget  = "write_bytes_per_s_budget"
	HostReadIOPSBudget  = "read_iops_budget"
	HostWriteIOPSBudget = "write_iops_budget"
)

// Figures of a node's whole host, read from the Prometheus node_exporter on it (directly or
// through a Prometheus server), after "host.<node>.": the same meaning as the local OS and
// disk samplers' figures of this machine, per node. Device figures carry the device:
// "host.<node>.disk.<device>.<figure>" (HostDiskName), with the Disk* figures.
const (
	HostCPUs      = "cpus"       // CPUs the host has
	HostCPUBusy   = "cpu_busy"   // share of its CPU time not idle, iowait or steal (0..1)
	HostCPUIOWait = "cpu_iowait" // share waiting for IO (0..1)
	HostCPUSteal  = "cpu_steal"  // share stolen by the hypervisor (0..1)
	HostRunQueue  = "run_queue"  // runnable tasks (procs_running)
	// HostCPUPressure is the share of the interval in which some runnable task waited for
	// a CPU (PSI, node_pressure_cpu_waiting_seconds_total; 0..1), as this machine's
	// psi.cpu.some: over the whole interval, where the run queue is an instant at a scrape.
	HostCPUPressure  = "cpu_pressure_some"
	HostMemTotal     = "mem_total_bytes" // MemTotal
	HostMemAvailable = "mem_available_bytes"
	// HostMemPageCache is the whole host's page cache (node_memory_Cached): not
	// HostPageCacheBytes, a modelled host's control group's own, which a node in a group on
	// a host with an exporter has beside it.
	HostMemPageCache  = "mem_page_cache_bytes"
	HostNetRxBPS      = "net_rx_bytes_per_s" // all interfaces but loopback
	HostNetTxBPS      = "net_tx_bytes_per_s"
	HostNetErrors     = "net_errors_per_s" // receive and transmit errors and drops
	HostScrapeOffsetS = "clock_offset_s"   // the exporter's clock minus agbench's, in seconds
	// HostBootTime is when the host booted (node_boot_time_seconds, Unix seconds): hosts
	// whose exporters agree on it are one machine.
	HostBootTime = "boot_time_s"
	hostDisk     = "disk."
)

// HostDiskName is the name of a device figure of a node's host:
// "host.<node>.disk.<device>.<figure>".
func HostDiskName(node, device, figure string) string {
	return HostName(node, hostDisk+SeriesNodeName(device)+"."+figure)
}

// ParseHostDiskName takes "host.<node>.disk.<device>.<figure>" apart.
func ParseHostDiskName(name string) (node, device, figure string, ok bool) {
	node, rest, ok := ParseHostName(name)
	if !ok {
		return "", "", "", false
	}
	rest, ok = strings.CutPrefix(rest, hostDisk)
	if !ok {
		return "", "", "", false
	}
	device, figure, ok = strings.Cut(rest, ".")
	if !ok || device == "" || figure == "" {
		return "", "", "", false
	}
	return node, device, figure, true
}

// HostName is the name of a figure of a node's modelled host: "host.<node>.<figure>".
func HostName(node, figure string) string { return HostPrefix + SeriesNodeName(node) + "." + figure }

// ParseHostName takes "host.<node>.<figure>" apart.
func ParseHostName(name string) (node, figure string, ok bool) {
	return parseNodeName(name, HostPrefix)
}
