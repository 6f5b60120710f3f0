// Package result owns the result file of one agbench run, results/<time>-<command>/result.json:
// its versioned schema (meta, steps × variants with merged HDR histograms, counters, time
// series, analysis), and reading and writing it atomically. Every workload, sampler, analysis
// and report meets here, so the schema only grows: fields are added, never renamed or given a
// new meaning, and readers ignore what they do not know.
//
// It also declares what a writer and a reader that may not import each other meet on: the
// sections of Extra (extra*.go: the samplers', the storage tester's, a seeding's, the
// readahead experiment's), read through typed accessors that name a section that does not
// decode, and the names of figures read across layers (names.go), built and parsed here.
// A run's command line is recorded without passwords (RedactArgs) and shown to be pasted
// (CommandLine) by the functions here, which a study's log and the report share.
//
// It imports nothing from agbench but agerr, atomicfile and proc (the kernel's files, read
// for the machine a run records); it must not import the runner, workloads, samplers,
// analyze or report (they import it).
//
// Imports from agbench: only internal/agerr, internal/atomicfile, internal/proc, internal/status.
package result

import (
	"encoding/json"
	"sort"
	"strings"
	"time"
)

// SchemaVersion is the version of the layout written by this agbench. Readers accept any
// version up to theirs; a change that would break an older reader bumps it.
const SchemaVersion = 1

// FileName is the name of the result file inside a run's folder.
const FileName = "result.json"

// Result is one run of one command: what ran, where, and what it measured.
type Result struct {
	// Schema is SchemaVersion at the time of writing.
	Schema int `json:"schema"`
	// Meta says what ran, on what, with which settings.
	Meta Meta `json:"meta"`
	// Steps are the measured steps in the order they ran: one per step of a sweep × variant
	// of a comparison × repeat.
	Steps []Step `json:"steps"`
	// Complete is false when the run was cut short (Ctrl-C, an error); IncompleteReason says why.
	// What was measured before is kept.
	Complete         bool   `json:"complete"`
	IncompleteReason string `json:"incomplete_reason,omitempty"`
	// Warnings are validity warnings found while running (e.g. read-intent sessions that did
	// not land on a standby, load generator saturated).
	Warnings []string `json:"warnings,omitempty"`
	// Extra holds run-level data of a workload or tool that fits nowhere else (e.g. the disk
	// tester's device description), keyed by its owner's name (extra.go); read and written
	// through ExtraOf, SetExtra and the typed accessors, never by hand.
	Extra map[string]json.RawMessage `json:"extra,omitempty"`
	// Analysis is owned by internal/analyze (knee, Little's law, validity, bottleneck). This
	// package stores it untouched.
	Analysis json.RawMessage `json:"analysis,omitempty"`
}

// Meta describes the run: tool, host, server, topology, command line and configuration.
type Meta struct {
	// Tool is "agbench"; ToolVersion is the binary's version (git describe).
	Tool        string `json:"tool"`
	ToolVersion string `json:"tool_version"`
	// Command is the command that ran ("stress", "scan", "tpcc run", "disk", "seed").
	Command string `json:"command"`
	// Args is the full command line after the program name, credentials removed (see Redact).
	Args []string `json:"args"`
	// Config is the command's effective configuration (flags with defaults applied), as the
	// command chose to record it, credentials removed.
	Config map[string]any `json:"config,omitempty"`
	// Seed is the seed all randomness of the run derives from.
	Seed int64 `json:"seed,omitempty"`
	// Started and Ended bound the whole run, set-up included.
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended,omitzero"`
	Host    Host      `json:"host"`
	// Server is the PostgreSQL server the run talked to (the primary), when there is one.
	Server *Server `json:"server,omitempty"`
	// Topology summarises the cluster or connection strings used, when there are any.
	Topology *Topology `json:"topology,omitempty"`
	// Segment is set when the run was one segment of several load generators' (segment.go);
	// Merged when the result was merged from such segments' results.
	Segment *Segment `json:"segment,omitempty"`
	Merged  *Merged  `json:"merged,omitempty"`
}

// Host is the machine the load generator ran on.
type Host struct {
	Hostname string `json:"hostname"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	Kernel   string `json:"kernel,omitempty"`
	CPUModel string `json:"cpu_model,omitempty"`
	// Cores is the number of CPUs online on the machine.
	Cores int `json:"cores"`
	// LoadGenCPU is the CPU the load generator (this process) may use: its affinity and its
	// control group's quota.
	LoadGenCPU  CPUCap `json:"loadgen_cpu,omitzero"`
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
	GoVersion   string `json:"go_version"`
}

// Server is a PostgreSQL server's version and the settings that matter to a benchmark
// (shared_buffers, synchronous_commit, max_connections, ...), as reported by the server.
type Server struct {
	Version    string            `json:"version"`
	VersionNum int               `json:"version_num,omitempty"`
	Settings   map[string]string `json:"settings,omitempty"`
}

// Topology summarises where the run sent its sessions.
type Topology struct {
	// Cluster is the agbench cluster's name, when --cluster was used.
	Cluster string `json:"cluster,omitempty"`
	// Commit is the cluster's commit mode (sync, async), when known.
	Commit string `json:"commit,omitempty"`
	Nodes  []Node `json:"nodes,omitempty"`
	// Listener is the listener's address, when sessions went through one.
	Listener string `json:"listener,omitempty"`
	// RoutingList is the listener's read-only routing list, when known.
	RoutingList string `json:"routing_list,omitempty"`
	// Hosts describes the cluster's host model ("each node a modelled host: 0.6 cores, …")
	// when its nodes ran in control groups of their own; HostCPUs and HostMemoryBytes are
	// each node's budget (0: none). Empty for a cluster whose nodes share one machine.
	Hosts           string  `json:"hosts,omitempty"`
	HostCPUs        float64 `json:"host_cpus,omitempty"`
	HostMemoryBytes int64   `json:"host_memory_bytes,omitempty"`
	// HostCPUShares is the CPU weight each node's group was given (cpu.shares units; 0: the
	// kernel's default). HostIO are each node's IO limits on HostIODevice (the disk that
	// held its data, "vda 254:0"), when it had any.
	HostCPUShares int     `json:"host_cpu_shares,omitempty"`
	HostIO        *HostIO `json:"host_io,omitempty"`
	HostIODevice  string  `json:"host_io_device,omitempty"`
	// Links describes the links with latency between clients and nodes, when the cluster
	// had them; LinkLatencySeconds is their latency per round trip, LinkBandwidth their
	// bytes per second each way per connection (0: unlimited).
	Links              string  `json:"links,omitempty"`
	LinkLatencySeconds float64 `json:"link_latency_seconds,omitempty"`
	LinkBandwidth      int64   `json:"link_bandwidth_bytes_per_s,omitempty"`
}

// HostIO is a modelled host's IO limits: bytes and operations per second (0: none).
type HostIO struct {
	ReadBPS   int64 `json:"read_bytes_per_s,omitempty"`
	WriteBPS  int64 `json:"write_bytes_per_s,omitempty"`
	ReadIOPS  int64 `json:"read_iops,omitempty"`
	WriteIOPS int64 `json:"write_iops,omitempty"`
}

// Node is one server of the topology.
type Node struct {
	Name string `json:"name"`
	Role string `json:"role"`
	Addr string `json:"addr"`
}

// Step is one measured step of a run: one point of a sweep for one variant and repeat.
type Step struct {
	// Index is the step's position in the order the run executed it (0-based).
	Index int `json:"index"`
	// Point is the step's position in the sweep (0-based): steps of the same Point and Variant
	// but another Repeat measure the same thing.
	Point int `json:"point"`
	// Variant names the compared variant ("routing=off"); "" when nothing is compared.
	Variant string `json:"variant,omitempty"`
	Repeat  int    `json:"repeat"`
	// Params are the step's knobs as given ("threads": "4", "routing": "on").
	Params map[string]string `json:"params,omitempty"`
	// VUs is the number of virtual users (threads, clients) of the step. A step of emulated
	// terminals has none: its load is its terminals over the pool of sessions that served
	// them (its terminals section, Concurrency); a result of an older agbench has the pool's
	// sessions here.
	VUs int `json:"vus,omitempty"`
	// Iterations per VU, when the step ran a fixed count; Duration when it ran for a time.
	Iterations int64   `json:"iterations,omitempty"`
	Rate       float64 `json:"rate_per_second,omitempty"`
	// Rampup is the warm-up before the measured window, excluded from every figure.
	RampupSeconds float64 `json:"rampup_seconds,omitempty"`
	// Window is the measured window; every figure of the step belongs to it.
	Window Window `json:"window"`
	// Ops are the operations by type ("query", "new_order", "read"), each with its latencies.
	Ops map[string]*Op `json:"ops"`
	// LateStarts counts operations of a fixed-rate step that started after their scheduled
	// time (their queueing delay is part of their latency).
	LateStarts int64 `json:"late_starts,omitempty"`
	// InFlight counts the operations of the window still running when it closed, and
	// InFlightOldestSeconds how long the oldest of them had been: they are in no latency
	// figure (a server that stopped answering holds them).
	InFlight              int64   `json:"in_flight,omitempty"`
	InFlightOldestSeconds float64 `json:"in_flight_oldest_seconds,omitempty"`
	// VUQuietMinSeconds is set when the runner watched each VU for stretches without a
	// completed operation: VUQuiet then lists those of the window at least this long (none:
	// no VU had one). Absent (0) in results of an older agbench: not watched.
	VUQuietMinSeconds float64   `json:"vu_quiet_min_seconds,omitempty"`
	VUQuiet           []VUQuiet `json:"vu_quiet,omitempty"`
	// Counters are workload-specific figures of the step: "nopm", "tpm", "iops", "mb_per_s",
	// "buffer_hits", "buffer_reads" ... Names are snake_case and carry their unit when not a count.
	Counters map[string]float64 `json:"counters,omitempty"`
	// Sessions counts the step's sessions by where they landed.
	Sessions []Sessions `json:"sessions,omitempty"`
	// Client is the load generator's own CPU use during the window.
	Client ClientCPU `json:"client"`
	// Throughput is operations completed per second, per op type (successes and errors
	// together, one point per second of the window); Throughput["*"] is all types together.
	Throughput map[string]TimeSeries `json:"throughput,omitempty"`
	// Series holds named time series of samplers (replication lag, wait events, diskstats,
	// CPU ...), keyed by "<sampler>.<series>", e.g. "pg.primary.wait.lwlock", "disk.sda.iops"
	// (names.go builds and parses them).
	Series map[string]TimeSeries `json:"series,omitempty"`
	// Warnings are the step's validity warnings and the errors of its samplers.
	Warnings []string `json:"warnings,omitempty"`
	// ErrorSamples keeps the first distinct error messages of the step (a few, for the report).
	ErrorSamples []string `json:"error_samples,omitempty"`
	// ErrorThroughput is failed operations per second, per op type, at the same points as
	// Throughput; ErrorThroughput["*"] is all types together.
	ErrorThroughput map[string]TimeSeries `json:"error_throughput,omitempty"`
	// Errors are the window's failed operations by class (SQLSTATE), most frequent first;
	// their counts add up to the errors of Ops.
	Errors []ErrorClass `json:"errors,omitempty"`
	// Reconnects says how the step's sessions were lost and made again; absent for a
	// workload whose workers do not reconnect (or have no session).
	Reconnects *Reconnects `json:"reconnects,omitempty"`
	// Complete is false when the step was cut short; the figures cover what ran.
	Complete         bool   `json:"complete"`
	IncompleteReason string `json:"incomplete_reason,omitempty"`
	// Extra holds step-level data of a workload that fits nowhere else, keyed by owner
	// (extra.go); read and written through ExtraOf, SetExtra and the typed accessors.
	Extra map[string]json.RawMessage `json:"extra,omitempty"`
	// Analysis is internal/analyze's verdict on the step, stored untouched.
	Analysis json.RawMessage `json:"analysis,omitempty"`
}

// Window is a measured time interval.
type Window struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// Seconds is the window's length in seconds.
func (w Window) Seconds() float64 { return w.End.Sub(w.Start).Seconds() }

// Op is one operation type's figures in a step.
type Op struct {
	// Count is the number of successful operations, Errors the failed ones.
	Count  int64 `json:"count"`
	Errors int64 `json:"errors"`
	// Retries counts retries inside operations (e.g. serialization failures retried by tpcc).
	Retries int64 `json:"retries,omitempty"`
	// Rows and Bytes are what the operations returned to the client.
	Rows  int64 `json:"rows,omitempty"`
	Bytes int64 `json:"bytes,omitempty"`
	// Latency of successful and failed operations, apart.
	Latency      Hist  `json:"latency"`
	ErrorLatency *Hist `json:"error_latency,omitempty"`
}

// ErrorClass is the failed operations of one class in a step's window.
type ErrorClass struct {
	// SQLState is the server's SQLSTATE, or for errors the server did not send: "08006"
	// (connection_failure) when the worker's session was lost with the error, and "client"
	// for any other error of the client.
	SQLState string `json:"sqlstate"`
	// Message is the first error message of the class.
	Message string `json:"message"`
	Count   int64  `json:"count"`
	// First and Last are when the first and the last of them failed.
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
}

// Reconnects are the sessions a step's workers lost and made again during its window.
type Reconnects struct {
	// Lost counts sessions found lost (closed by the server or the network) after a failed
	// operation; Count those made again, Failed the attempts to make one that failed, and
	// Unrestored the sessions still lost when the window closed.
	Lost       int64 `json:"lost"`
	Count      int64 `json:"count"`
	Failed     int64 `json:"failed_attempts"`
	Unrestored int64 `json:"unrestored"`
	// DownSeconds is the time the workers were without a session, summed over workers;
	// MaxDownSeconds the longest single outage of one worker.
	DownSeconds    float64 `json:"down_seconds"`
	MaxDownSeconds float64 `json:"max_down_seconds"`
	// UnrestoredSeconds is the part of DownSeconds of the sessions still lost when the window
	// closed: how long, summed over workers, they had been without a session by then.
	UnrestoredSeconds float64 `json:"unrestored_seconds,omitempty"`
	// First is when the first session was found lost, Last when the last one came back
	// (zero when none came back).
	First time.Time `json:"first,omitzero"`
	Last  time.Time `json:"last,omitzero"`
	// LastError is the last failed attempt's error.
	LastError string `json:"last_error,omitempty"`
}

// StillLostSeconds is how long, on average, the sessions still lost at a window's end must
// have been without one for the step's load to count as not running at its end: a session
// lost a moment before the window closed is not yet a lost load.
const StillLostSeconds = 1.0

// StillLost reports whether sessions were still lost when the window closed, and had been
// for StillLostSeconds or more on average: part of the load was not running at the end.
func (r *Reconnects) StillLost() bool {
	return r != nil && r.Unrestored > 0 && r.UnrestoredSeconds >= StillLostSeconds*float64(r.Unrestored)
}

// VUQuiet is a stretch of a step's window in which one VU completed no operation (none
// succeeded and none failed): a session waiting for a lock, on a frozen node, across a
// partition, or being made again. From and To are seconds of the window.
type VUQuiet struct {
	// VU is the VU's index in the step (0-based; in a segment's result, its number in the whole run).
	VU   int     `json:"vu"`
	From float64 `json:"from"`
	To   float64 `json:"to"`
	// ToEnd is set when the VU completed no operation from From until the window closed.
	ToEnd bool `json:"to_end,omitempty"`
	// Node is where the VU's session was at the stretch's end (its nodes, comma-separated,
	// for a VU of several sessions); "" when the workload does not say.
	Node string `json:"node,omitempty"`
	// Reconnected is set when the VU's session was lost and made again in the stretch.
	Reconnected bool `json:"reconnected,omitempty"`
}

// Sessions counts sessions that landed on one node: every session the step's workers made,
// those made again after a loss (a failover, a restart) included.
type Sessions struct {
	// Node is the node's name in the topology, or host:port when it is not in one.
	Node string `json:"node"`
	// InRecovery is true when the node was a standby (pg_is_in_recovery()) when the session began.
	InRecovery bool `json:"in_recovery"`
	Count      int  `json:"count"`
	// Ops counts the window's operations (successes and failures) run on these sessions;
	// absent when a worker of several sessions (tpcc's read-intent one) ran some of them,
	// whose operations the runner cannot place, and in results of an older agbench.
	Ops *int64 `json:"ops,omitempty"`
}

// ClientCPU is the load generator's own CPU time during a window.
type ClientCPU struct {
	UserSeconds   float64 `json:"user_seconds"`
	SystemSeconds float64 `json:"system_seconds"`
	// Utilisation is CPU seconds per wall second divided by the cores the load generator
	// may use (Host.LoadGenCPU: its affinity and its control group's quota), 0..1.
	Utilisation float64 `json:"utilisation"`
	// Cap is the CPU the load generator could use (what Utilisation divides by); empty
	// when not read (a result of an older agbench, or a command that does not).
	Cap CPUCap `json:"cap,omitzero"`
	// PerOpMicros is CPU microseconds per completed operation.
	PerOpMicros float64 `json:"per_op_us,omitempty"`
}

// TimeSeries is a named series of values at offsets from a start time. T and V have the
// same length; T is seconds since Start, increasing.
type TimeSeries struct {
	Unit  string    `json:"unit,omitempty"`
	Start time.Time `json:"start"`
	T     []float64 `json:"t"`
	V     []float64 `json:"v"`
}

// Add appends one point at time at.
func (s *TimeSeries) Add(at time.Time, v float64) {
	if s.Start.IsZero() {
		s.Start = at
	}
	s.T = append(s.T, at.Sub(s.Start).Seconds())
	s.V = append(s.V, v)
}

// AddPoint appends one point at time at to the series name of m, making it (with unit and
// start) when m has none of that name yet.
func AddPoint(m map[string]*TimeSeries, name, unit string, start, at time.Time, v float64) {
	s := m[name]
	if s == nil {
		s = &TimeSeries{Unit: unit, Start: start}
		m[name] = s
	}
	s.Add(at, v)
}

// Knobs names the step by its knobs, sorted ("routing=on threads=4").
func (s *Step) Knobs() string {
	keys := make([]string, 0, len(s.Params))
	for k := range s.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + s.Params[k]
	}
	return strings.Join(parts, " ")
}

// Totals sums Count, Errors, Rows and Bytes over all op types of the step (nil ops count nothing).
func (s *Step) Totals() Op {
	var t Op
	for _, o := range s.Ops {
		if o == nil { // a file may hold "op": null
			continue
		}
		t.AddCounts(o)
	}
	return t
}

// AddCounts adds x's Count, Errors, Retries, Rows and Bytes to o's (not their latencies,
// which merge as histograms: MergeHists).
func (o *Op) AddCounts(x *Op) {
	o.Count += x.Count
	o.Errors += x.Errors
	o.Retries += x.Retries
	o.Rows += x.Rows
	o.Bytes += x.Bytes
}

// DoneRate is the operations fixed-rate steps (one step, or the repeats of one load)
// started per second of their windows: successes and failures over the windows' total
// seconds. It is absent (false) for a closed-loop step, which asked no rate, and without a
// window. The table's done/s and the analysis's rate-not-kept both use it.
func DoneRate(steps ...*Step) (float64, bool) {
	var started int64
	var sec float64
	for _, st := range steps {
		if st.Rate <= 0 {
			return 0, false
		}
		t := st.Totals()
		started += t.Count + t.Errors
		sec += st.Window.Seconds()
	}
	if sec <= 0 {
		return 0, false
	}
	return float64(started) / sec, true
}

// OpsPerSecond returns successful operations per second of the window, all types together.
func (s *Step) OpsPerSecond() float64 {
	sec := s.Window.Seconds()
	if sec <= 0 {
		return 0
	}
	return float64(s.Totals().Count) / sec
}
