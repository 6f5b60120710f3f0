package cluster

import (
	"context"
	"time"

	"github.com/agbench/agbench/internal/status"
)

// NodeStatus is one node's state (status.Node).
type NodeStatus = status.Node

// Status is the whole cluster's state (status.Cluster).
type Status = status.Cluster

// Status reads every node's state; a node that is down or unreachable is reported, not an error.
func (t *Topology) Status(ctx context.Context) *Status {
	st := &Status{Name: t.Name, Commit: t.Commit, Version: t.PG.Version, Dir: t.Dir, Listener: t.Listener, Hosts: t.Hosts, Links: t.Links, Netns: t.Netns,
		Patroni: t.Patroni, At: time.Now().UTC(), ListenerRunning: t.ListenerAlive()}
	if t.Patroni != nil {
		st.PatroniView = t.patroniStatus(ctx)
	}
	hosts := t.hostUse(ctx)
	repl := map[string]NodeStatus{}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		ns := NodeStatus{Name: n.Name, Role: n.Role, Host: n.Host, Port: n.Port, Budget: hosts[n.Name], OwnHost: netnsStatus(n)}
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
