package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"
)

// replicationAddr is where a standby reaches primary p for replication: its relay while
// RouteReplication is in force, else its client address (its link when the cluster has links).
func (t *Topology) replicationAddr(p *Node) (host, port string) {
	if a, ok := t.replicationVia[p.Name]; ok {
		if h, pt, err := net.SplitHostPort(a); err == nil {
			return h, pt
		}
	}
	return p.ClientHost(), strconv.Itoa(p.ClientPort())
}

// RouteReplication makes every standby stream from the primary through a relay: via maps
// each node's name to the address (host:port) of a relay that forwards to its client
// address, so that the standbys follow a new primary through its relay after a failover;
// nil routes them directly again. Each running standby's configuration is rewritten and
// reloaded (its WAL receiver reconnects), and RouteReplication waits until each streams.
// The route is not saved in the topology: agbench cluster stop and start undo it.
func (t *Topology) RouteReplication(ctx context.Context, via map[string]string) error {
	for name, a := range via {
		if t.Node(name) == nil {
			return fmt.Errorf("relay for %q: no such node in cluster %s", name, t.Name)
		}
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("relay for %s: %w", name, err)
		}
	}
	t.replicationVia = via
	var errs []error
	for _, s := range t.Standbys() {
		if err := t.writeConf(s); err != nil {
			errs = append(errs, err)
			continue
		}
		if !t.nodeRunning(s) {
			continue
		}
		if err := t.reload(ctx, s); err != nil {
			errs = append(errs, fmt.Errorf("reload %s: %w", s.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	host, port := t.replicationAddr(t.Primary())
	for _, s := range t.Standbys() {
		if !t.nodeRunning(s) {
			continue
		}
		if err := t.waitReceivingFrom(ctx, s, host, port, streamingTimeout); err != nil {
			errs = append(errs, err)
		} else if err := t.waitStreaming(ctx, s.Name, streamingTimeout); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// waitReceivingFrom waits until standby s's WAL receiver streams from host:port (its old
// connection, still streaming for a moment after a reload, does not count).
func (t *Topology) waitReceivingFrom(ctx context.Context, s *Node, host, port string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var status, h, p string
		var recovery bool
		c, err := t.Connect(ctx, s)
		if err == nil {
			err = c.QueryRow(ctx, `SELECT pg_is_in_recovery(), coalesce(status, ''), coalesce(sender_host, ''), coalesce(sender_port::text, '')
				FROM (SELECT 1) one LEFT JOIN pg_stat_wal_receiver ON true`).Scan(&recovery, &status, &h, &p)
			c.Close(context.WithoutCancel(ctx))
			if err == nil && !recovery {
				return fmt.Errorf("%s is not a standby: it accepts writes", s.Name)
			}
		}
		if err == nil && status == "streaming" && h == host && p == port {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s does not stream from %s:%s after %v (status %q from %s:%s, %v)", s.Name, host, port, timeout, status, h, p, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
