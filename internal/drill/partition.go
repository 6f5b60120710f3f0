package drill

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/links"
	"github.com/agbench/agbench/internal/result"
)

// isolateWait bounds the wait, after a cut, for the standbys to stop receiving from the
// primary (beyond the detection timeout).
const isolateWait = 30 * time.Second

// preparePartition sets up what the fault needs before the cycles and returns its undo, which may be
// called more than once. partition-primary routes every standby's replication connection
// through a relay (internal/links, one per node on a free loopback port, forwarding to the
// node's client address), so that a cycle can cut the primary's; the undo heals every relay,
// routes replication directly again and stops the relays.
func preparePartition(ctx context.Context, t *cluster.Topology, o *Options, p Progress) (func() error, error) {
	if o.Fault != FaultPartitionPrimary {
		return func() error { return nil }, nil
	}
	var ls []links.Link
	for _, n := range t.Nodes {
		ls = append(ls, links.Link{Name: n.Name, Listen: net.JoinHostPort(t.RelayHost(&n), "0"), Upstream: n.ClientAddr()})
	}
	r, err := links.StartRelays(ls)
	if err != nil {
		return nil, fmt.Errorf("relays for the replication connections: %w", err)
	}
	via := map[string]string{}
	for _, n := range t.Nodes {
		via[n.Name] = r.Addr(n.Name)
	}
	var once sync.Once
	var undoErr error
	undo := func() error {
		once.Do(func() {
			uctx := context.WithoutCancel(ctx)
			var errs []error
			for _, n := range t.Nodes {
				errs = append(errs, r.Heal(n.Name))
			}
			if err := t.RouteReplication(uctx, nil); err != nil {
				errs = append(errs, fmt.Errorf("route replication directly again: %w (agbench cluster stop %s; agbench cluster start %s)", err, t.Name, t.Name))
			}
			r.Close()
			undoErr = errors.Join(errs...)
			if undoErr == nil {
				p("replication routed directly again, relays stopped")
			}
		})
		return undoErr
	}
	if err := t.RouteReplication(ctx, via); err != nil {
		return nil, errors.Join(fmt.Errorf("route replication through relays: %w", err), undo())
	}
	o.relays = r
	p("replication routed through relays %v", via)
	return undo, nil
}

// injectPartition cuts the primary off from its standbys (its relay silent both ways, the
// connections held open, as a partitioned network does) while clients still reach it, and
// fails over as a DBA would when the standbys lost the primary: the cut is detected when no
// standby has received anything from the primary for o.DetectTimeout, then agbench's
// failover fences the old primary (SIGKILL of its processes: with async commit it
// acknowledged writes that no standby got, lost now; with sync commit its commits blocked
// until then), promotes the standby that received the most WAL, and rewinds the old one into
// a standby. The relay is healed at the end; interrupted before the failover begins, it is
// healed at once and the primary stays primary.
func injectPartition(ctx context.Context, t *cluster.Topology, o Options, c *Cycle, dc *result.DrillCycle, p Progress) (*cluster.FailoverReport, error) {
	hctx := context.WithoutCancel(ctx)
	heal := func(why string) error {
		if err := o.relays.Heal(dc.From); err != nil {
			return err
		}
		p("cycle %d: %s: healed the link of %s", c.N, why, dc.From)
		return nil
	}
	dc.FaultAt = time.Now()
	c.tally.fault(dc.FaultAt)
	if err := o.relays.Cut(dc.From); err != nil {
		return nil, errors.Join(err, heal("cut failed"))
	}
	p("cycle %d: cut %s off from its standbys (relay silent both ways)", c.N, dc.From)
	if o.Hooks != nil && o.Hooks.BeforeFailover != nil {
		if err := o.Hooks.BeforeFailover(hctx, c); err != nil {
			return nil, errors.Join(err, heal("hook failed"))
		}
	}
	timeout := o.DetectTimeout
	if timeout <= 0 {
		timeout = DefaultDetectTimeout
	}
	at, err := waitIsolated(ctx, t, timeout)
	if err != nil {
		why := "not detected"
		if ctx.Err() != nil {
			why = "interrupted before the failover"
		}
		return nil, errors.Join(err, heal(why))
	}
	dc.DetectSeconds = since(dc.FaultAt, at)
	p("cycle %d: no standby received from %s for %v", c.N, dc.From, timeout)
	rep, err := failover(hctx, t, o, c, cluster.FailoverOptions{Fence: true})
	return rep, errors.Join(err, heal("end of cycle"))
}

// waitIsolated waits until no standby has received anything from the primary for timeout
// (pg_stat_wal_receiver's last message; a standby whose WAL receiver does not run counts as
// cut off), and returns when that was seen. ctx's end stops the wait: the failover has not
// begun.
func waitIsolated(ctx context.Context, t *cluster.Topology, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout + isolateWait)
	for {
		quiet, err := standbysQuiet(ctx, t, timeout)
		if err == nil && quiet {
			return time.Now(), nil
		}
		if ctx.Err() != nil {
			return time.Time{}, ctx.Err()
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("standbys still receive from %s %v after the cut (%v): the cut did not isolate it", t.Primary().Name, timeout+isolateWait, err)
		}
		sleep(ctx, 20*time.Millisecond)
	}
}

// standbysQuiet reports whether every standby's last message from the primary is older than d.
func standbysQuiet(ctx context.Context, t *cluster.Topology, d time.Duration) (bool, error) {
	for _, s := range t.Standbys() {
		c, err := t.Connect(ctx, s)
		if err != nil {
			return false, err
		}
		var age float64
		err = c.QueryRow(ctx, `SELECT coalesce((SELECT extract(epoch FROM clock_timestamp() - last_msg_receipt_time)::float8
			FROM pg_stat_wal_receiver WHERE status = 'streaming'), 'Infinity')`).Scan(&age)
		c.Close(context.WithoutCancel(ctx))
		if err != nil {
			return false, err
		}
		if age < d.Seconds() {
			return false, nil
		}
	}
	return true, nil
}
