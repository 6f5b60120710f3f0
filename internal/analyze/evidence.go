package analyze

import "github.com/agbench/agbench/internal/result"

// Waits is a wait profile: the mean number of sessions in each class over a window, sampled
// from pg_stat_activity. Classes follow what a SQL Server DBA reads from wait stats.
type Waits struct {
	CPU      float64 `json:"cpu"`       // active with no wait: running (or runnable) on a CPU
	Log      float64 `json:"log"`       // WALWrite, WALSync, WAL insert locks (≈ WRITELOG)
	DataRead float64 `json:"data_read"` // DataFileRead, DataFilePrefetch (≈ PAGEIOLATCH)
	OtherIO  float64 `json:"other_io"`  // any other IO wait
	LWLock   float64 `json:"lwlock"`    // lightweight locks other than the WAL's
	Lock     float64 `json:"lock"`      // heavyweight (row, table, transaction) locks
	Client   float64 `json:"client"`    // waiting for the client: ClientRead/ClientWrite, idle in transaction
	SyncRep  float64 `json:"sync_rep"`  // waiting for a synchronous standby to confirm
	Other    float64 `json:"other"`
}

// Total is the mean number of sessions sampled (active, or idle in a transaction).
func (w Waits) Total() float64 {
	return w.CPU + w.Log + w.DataRead + w.OtherIO + w.LWLock + w.Lock + w.Client + w.SyncRep + w.Other
}

// Device is what the block layer saw of the device under the data (means over a window).
type Device struct {
	Name      string  `json:"name"`
	IOPS      float64 `json:"iops"`
	ReadMBps  float64 `json:"read_mbps"`
	WriteMBps float64 `json:"write_mbps"`
	AwaitMs   float64 `json:"await_ms"`
	Queue     float64 `json:"queue"`
	Util      float64 `json:"util"`
}

// MBps is read plus write throughput.
func (d Device) MBps() float64 { return d.ReadMBps + d.WriteMBps }

// Evidence is what the samplers saw during one step's measured window (means over it).
// Zero values mean "not measured".
type Evidence struct {
	Load  float64 `json:"load"`
	Waits Waits   `json:"waits"`
	// TopWaits are the most frequent wait events, summed over nodes, most first; Class is
	// their Waits class as the samplers name it ("log", "data_read", "lock" ...).
	TopWaits []result.WaitEvent `json:"top_waits,omitempty"`
	// CPUBusy and Steal are shares (0..1) of the machine's CPU time where the database runs.
	CPUBusy float64 `json:"cpu_busy"`
	Steal   float64 `json:"steal"`
	// CPUAbsent is true when no sampler measured the machine's CPU (CPUBusy, Steal are then
	// not 0 but unknown).
	CPUAbsent bool `json:"cpu_absent,omitempty"`
	// WaitsAbsent is true when no database sampler recorded the sessions' waits (--sample=false,
	// or a listener alone, which no database sampler watches): Waits are then not 0 but unknown.
	WaitsAbsent bool `json:"waits_absent,omitempty"`
	// LoadGenCores is the CPU the load generator used, in cores; LoadGenShare of the machine.
	LoadGenCores float64 `json:"loadgen_cores"`
	LoadGenShare float64 `json:"loadgen_share"`
	Device       Device  `json:"device"`
	// ExpectedDeviceMBps is the device traffic the workload itself accounts for (the bytes a
	// storage test moved, or the database's own reads, writes and WAL); 0 when unknown.
	ExpectedDeviceMBps float64 `json:"expected_device_mbps,omitempty"`
	// ReplayLagSec is the largest replay lag among standbys at the last read of the window
	// that measured each, on Standby; LagGrowth is how many seconds of lag it gained per
	// second between its first and last measured reads. Standby is empty when no standby's
	// lag was measured.
	Standby      string  `json:"standby,omitempty"`
	ReplayLagSec float64 `json:"replay_lag_sec"`
	LagGrowth    float64 `json:"lag_growth"`
	// LagAbsent says why a standby's lag was not measured (the sampler's login lacked
	// pg_read_all_stats and watched no standby, or pg_stat_replication showed it NULL at
	// every read): whether that standby fell behind is then not judged, and the lag figures
	// above are those of the standbys measured, not 0 but unknown when Standby is empty.
	LagAbsent string `json:"lag_absent,omitempty"`
	// Away are the standbys that were not there for part of the window: gone from their
	// primary's pg_stat_replication, or lost to the sampler (syncaway.go).
	Away []StandbyAway `json:"standbys_away,omitempty"`
	// Host is what the window says of the host's CPU (host.go).
	Host HostEvidence `json:"host"`
	// Hosts are the nodes' modelled hosts (control groups), when the cluster had them.
	Hosts []HostUse `json:"hosts,omitempty"`
	// NodeHosts are the nodes' own hosts as their node_exporters saw them (nodehost.go),
	// when they were read.
	NodeHosts []NodeHost `json:"node_hosts,omitempty"`
}

// evidenceAt returns the evidence of the step with this load, if any.
func evidenceAt(ev []Evidence, load float64) (Evidence, bool) {
	for _, e := range ev {
		if e.Load == load {
			return e, true
		}
	}
	return Evidence{}, false
}
