package cluster

import (
	"context"
	"time"
)

// NodeStatus is one node's state as `cluster status` shows it. LSNs are PostgreSQL's text
// form; lags are measured against the primary's current WAL position, in bytes, and, where
// pg_stat_replication has them, in seconds.
type NodeStatus struct {
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
}

// Status is the whole cluster's state.
type Status struct {
	Name     string        `json:"name"`
	Commit   string        `json:"commit"`
	Version  string        `json:"postgres_version"`
	Dir      string        `json:"dir"`
	Nodes    []NodeStatus  `json:"nodes"`
	Listener *ListenerInfo `json:"listener,omitempty"`
	Hosts    *HostModel    `json:"hosts,omitempty"`
	Links    *LinksInfo    `json:"links,omitempty"`
	// Patroni is Patroni's settings and its view of the members (GET /cluster), when it runs
	// the cluster.
	Patroni     *PatroniInfo `json:"patroni,omitempty"`
	PatroniView *PatroniView `json:"patroni_view,omitempty"`
	At          time.Time    `json:"at"`
}

// Status reads every node's state; a node that is down or unreachable is reported, not an error.
func (t *Topology) Status(ctx context.Context) *Status {
	st := &Status{Name: t.Name, Commit: t.Commit, Version: t.PG.Version, Dir: t.Dir, Listener: t.Listener, Hosts: t.Hosts, Links: t.Links,
		Patroni: t.Patroni, At: time.Now().UTC()}
	if t.Patroni != nil {
		st.PatroniView = t.patroniStatus(ctx)
	}
	hosts := t.hostUse(ctx)
	repl := map[string]NodeStatus{}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		ns := NodeStatus{Name: n.Name, Role: n.Role, Host: n.Host, Port: n.Port, Budget: hosts[n.Name]}
		if !t.nodeRunning(n) {
			ns.State = "stopped"
			st.Nodes = append(st.Nodes, ns)
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		t.probeNode(cctx, n, &ns, repl)
		cancel()
		st.Nodes = append(st.Nodes, ns)
	}
	var current string
	for _, ns := range st.Nodes {
		if ns.Role == RolePrimary {
			current = ns.CurrentLSN
		}
	}
	for i := range st.Nodes {
		ns := &st.Nodes[i]
		if r, ok := repl[ns.Name]; ok && ns.Role == RoleStandby {
			ns.WriteLagBytes, ns.FlushLagBytes, ns.ReplayLagBytes = r.WriteLagBytes, r.FlushLagBytes, r.ReplayLagBytes
			ns.WriteLagSec, ns.FlushLagSec, ns.ReplayLagSec = r.WriteLagSec, r.FlushLagSec, r.ReplayLagSec
			ns.SyncState = r.SyncState
			if ns.State == "running" {
				ns.State = r.State
			}
		}
		// Until a standby's first feedback the primary knows none of its positions; its own
		// received and replayed positions still tell how far behind it is.
		if ns.Role == RoleStandby && current != "" {
			if ns.WriteLagBytes == nil && ns.ReceivedLSN != "" {
				ns.WriteLagBytes = lagBytes(current, ns.ReceivedLSN)
			}
			if ns.ReplayLagBytes == nil && ns.ReplayedLSN != "" {
				ns.ReplayLagBytes = lagBytes(current, ns.ReplayedLSN)
			}
		}
	}
	return st
}

// lagBytes is how far behind lsn is from current, never below zero (the standby's reading
// may be a moment newer than the primary's).
func lagBytes(current, lsn string) *int64 {
	d := max(lsnDiff(current, lsn), 0)
	return &d
}

// probeNode fills what the node says of itself; from the primary it also collects
// pg_stat_replication rows by application name into repl.
func (t *Topology) probeNode(ctx context.Context, n *Node, ns *NodeStatus, repl map[string]NodeStatus) {
	c, err := t.Connect(ctx, n)
	if err != nil {
		ns.State, ns.Error = "unreachable", err.Error()
		return
	}
	defer c.Close(context.WithoutCancel(ctx))
	ns.State, ns.Readable = "running", true
	if err := c.QueryRow(ctx, `SELECT pg_is_in_recovery()`).Scan(&ns.InRecovery); err != nil {
		ns.Error = err.Error()
		return
	}
	if ns.InRecovery {
		var recv, replay *string
		err := c.QueryRow(ctx, `SELECT pg_last_wal_receive_lsn()::text, pg_last_wal_replay_lsn()::text, pg_is_wal_replay_paused()`).
			Scan(&recv, &replay, &ns.ReplayPaused)
		if err != nil {
			ns.Error = err.Error()
		}
		ns.ReceivedLSN, ns.ReplayedLSN = deref(recv), deref(replay)
		if ns.ReceivedLSN == "" {
			ns.State = "not streaming"
		}
		return
	}
	if err := c.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&ns.CurrentLSN); err != nil {
		ns.Error = err.Error()
		return
	}
	rows, err := c.Query(ctx, `SELECT application_name, state,
		pg_wal_lsn_diff(pg_current_wal_lsn(), write_lsn)::bigint,
		pg_wal_lsn_diff(pg_current_wal_lsn(), flush_lsn)::bigint,
		pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::bigint,
		extract(epoch FROM write_lag)::float8, extract(epoch FROM flush_lag)::float8, extract(epoch FROM replay_lag)::float8,
		sync_state
		FROM pg_stat_replication`)
	if err != nil {
		ns.Error = err.Error()
		return
	}
	defer rows.Close()
	for rows.Next() {
		var r NodeStatus
		var name string
		if err := rows.Scan(&name, &r.State, &r.WriteLagBytes, &r.FlushLagBytes, &r.ReplayLagBytes,
			&r.WriteLagSec, &r.FlushLagSec, &r.ReplayLagSec, &r.SyncState); err != nil {
			ns.Error = err.Error()
			return
		}
		repl[name] = r
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
