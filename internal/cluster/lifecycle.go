package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// Start starts every node, the primary first, and waits until each standby streams again.
func (t *Topology) Start(ctx context.Context) error {
	if t.Patroni != nil {
		return t.startPatroniAll(ctx)
	}
	p := t.Primary()
	if err := t.startNode(ctx, p); err != nil {
		return err
	}
	for _, s := range t.Standbys() {
		if err := t.writeConf(s); err != nil {
			return err
		}
		if err := t.startNode(ctx, s); err != nil {
			return err
		}
	}
	for _, s := range t.Standbys() {
		if err := t.waitStreaming(ctx, s.Name, streamingTimeout); err != nil {
			return err
		}
	}
	return nil
}

// Stop stops every node (fast shutdown), the primary first so that the standbys receive its
// shutdown checkpoint.
func (t *Topology) Stop(ctx context.Context) error {
	if t.Patroni != nil {
		return errors.Join(t.stopPatroniAll(), t.Save())
	}
	var errs []error
	if err := t.stopNode(ctx, t.Primary(), "fast"); err != nil {
		errs = append(errs, err)
	}
	for _, s := range t.Standbys() {
		if err := t.stopNode(ctx, s, "fast"); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Running reports, per node name, whether its server is up.
func (t *Topology) Running() map[string]bool {
	m := map[string]bool{}
	for i := range t.Nodes {
		m[t.Nodes[i].Name] = t.nodeRunning(&t.Nodes[i])
	}
	return m
}

// Destroy stops every node and the cluster's listener, removes the nodes' control groups
// (killing what a crash left in them), their network namespaces with their exporters, veths
// and bridge (likewise), and the cluster's folder, and nothing else.
func (t *Topology) Destroy(ctx context.Context) error {
	return t.removeAll(ctx)
}

func (t *Topology) removeAll(ctx context.Context) error {
	var errs []error
	if t.Listener != nil {
		errs = append(errs, t.stopListenerProcess())
	}
	if t.Links != nil {
		errs = append(errs, t.stopLinksProcess())
	}
	if err := t.stopPatroniAll(); err != nil {
		errs = append(errs, err)
	}
	for i := range t.Nodes {
		errs = append(errs, t.stopNodeNow(ctx, &t.Nodes[i]))
	}
	if t.Netns != nil {
		errs = append(errs, t.removeNetns())
	}
	if err := t.removeGroups(); err != nil {
		errs = append(errs, err)
	}
	if !strings.Contains(t.Dir, string(os.PathSeparator)+"clusters"+string(os.PathSeparator)) {
		return fmt.Errorf("refusing to remove %s: not a cluster folder", t.Dir)
	}
	if err := os.RemoveAll(t.Dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// nodeQuitGrace is how long a postmaster that pg_ctl could not stop has to end after
// SIGQUIT (immediate shutdown) before it is killed.
const nodeQuitGrace = 10 * time.Second

// stopNodeNow stops a node whose data goes next: an immediate shutdown, and when pg_ctl
// cannot do it, SIGQUIT to the postmaster (what pg_ctl's immediate mode sends), then SIGKILL.
func (t *Topology) stopNodeNow(ctx context.Context, n *Node) error {
	err := t.stopNode(ctx, n, "immediate")
	if pid := postmasterPID(n.DataDir); pid > 0 {
		if _, kerr := stopProcess(pid, syscall.SIGQUIT, nodeQuitGrace); kerr != nil {
			err = errors.Join(err, fmt.Errorf("stop %s: %w", n.Name, kerr))
		}
	}
	return err
}

// StartNode starts one node by name.
func (t *Topology) StartNode(ctx context.Context, name string) error {
	n := t.Node(name)
	if n == nil {
		return fmt.Errorf("no node %q", name)
	}
	if n.Role == RoleStandby {
		if err := t.writeConf(n); err != nil {
			return err
		}
	}
	return t.startNode(ctx, n)
}

// StopNode stops one node by name (fast shutdown).
func (t *Topology) StopNode(ctx context.Context, name string) error {
	return t.StopNodeMode(ctx, name, "fast")
}

// StopNodeMode stops one node with pg_ctl's mode: smart, fast or immediate (a crash).
func (t *Topology) StopNodeMode(ctx context.Context, name, mode string) error {
	n := t.Node(name)
	if n == nil {
		return fmt.Errorf("no node %q", name)
	}
	return t.stopNode(ctx, n, mode)
}

// WaitCaughtUp waits until every running standby has replayed the primary's current WAL
// position (pg_current_wal_lsn(): every record written so far).
func (t *Topology) WaitCaughtUp(ctx context.Context, timeout time.Duration) error {
	c, err := t.Connect(ctx, t.Primary())
	if err != nil {
		return err
	}
	var lsn string
	err = c.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&lsn)
	c.Close(context.WithoutCancel(ctx))
	if err != nil {
		return err
	}
	for _, s := range t.Standbys() {
		if !t.nodeRunning(s) {
			continue
		}
		if err := t.waitReplayedTo(ctx, s, lsn, timeout); err != nil {
			return err
		}
	}
	return nil
}
