package status

import "time"

// Roles of a node, as the cluster's topology, its status and a listener's /status name them.
const (
	RolePrimary = "primary"
	RoleStandby = "standby"
)

// Node is one node's state as `cluster status` shows it. LSNs are PostgreSQL's text
// form; lags are measured against the primary's current WAL position, in bytes, and, where
// pg_stat_replication has them, in seconds.
type Node struct {
	Name       string `json:"name"`
	Role       string `json:"role"`
	Host       string `json:"host"`
	Port       int    `json:"port"`
	State      string `json:"state"` // running, streaming, stopped, unreachable, …
	Readable   bool   `json:"readable"`
	InRecovery bool   `json:"in_recovery"`
	Error      string `json:"error,omitempty"`

	CurrentLSN   string `json:"current_lsn,omitempty"`  // primary: pg_current_wal_lsn
	ReceivedLSN  string `json:"received_lsn,omitempty"` // standby: pg_last_wal_receive_lsn
	ReplayedLSN  string `json:"replayed_lsn,omitempty"` // standby: pg_last_wal_replay_lsn
	ReplayPaused bool   `json:"replay_paused,omitempty"`

	WriteLagBytes  *int64   `json:"write_lag_bytes,omitempty"`
	FlushLagBytes  *int64   `json:"flush_lag_bytes,omitempty"`
	ReplayLagBytes *int64   `json:"replay_lag_bytes,omitempty"`
	WriteLagSec    *float64 `json:"write_lag_seconds,omitempty"`
	FlushLagSec    *float64 `json:"flush_lag_seconds,omitempty"`
	ReplayLagSec   *float64 `json:"replay_lag_seconds,omitempty"`
	SyncState      string   `json:"sync_state,omitempty"` // sync, potential, quorum, async
	// Host is the node's modelled host (its control group's budget and use), when it has one.
	Budget *HostUse `json:"modelled_host,omitempty"`
	// OwnHost is the node's network namespace and exporter, when it is a host of its own.
	OwnHost *NodeHost `json:"own_host,omitempty"`
}

// Cluster is the whole cluster's state, as `cluster status` shows it.
type Cluster struct {
	Name     string        `json:"name"`
	Commit   string        `json:"commit"`
	Version  string        `json:"postgres_version"`
	Dir      string        `json:"dir"`
	Nodes    []Node        `json:"nodes"`
	Listener *ListenerInfo `json:"listener,omitempty"`
	Hosts    *HostModel    `json:"hosts,omitempty"`
	Links    *LinksInfo    `json:"links,omitempty"`
	Netns    *NetnsInfo    `json:"netns,omitempty"`
	// Patroni is Patroni's settings and its view of the members (GET /cluster), when it runs
	// the cluster.
	Patroni     *PatroniInfo `json:"patroni,omitempty"`
	PatroniView *PatroniView `json:"patroni_view,omitempty"`
	At          time.Time    `json:"at"`
	// ListenerRunning says whether the listener's process runs, which only the cluster
	// package can tell (render reads no process table); status's JSON leaves it out.
	ListenerRunning bool `json:"-"`
}

// Summary is one cluster's line in `cluster list`: its PostgreSQL, commit mode, primary,
// how many nodes it has and how many run; Error says why its topology could not be read
// (the rest then unknown).
type Summary struct {
	Name, Version, Commit string
	Primary, Host         string
	Port                  int
	Nodes, Running        int
	Error                 string
}
