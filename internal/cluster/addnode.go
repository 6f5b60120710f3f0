package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/agerr"
)

// Adding a standby to a running cluster is split into steps so that a caller (seeding) can
// time each one and fill the data directory its own way:
//
//	n, _ := t.PlanStandby("standby3")  // name, port, folders; nothing made yet
//	t.CreateSlot(ctx, n.Slot)          // the primary keeps WAL for it from now on
//	... fill n.DataDir (pg_basebackup, or restore a backup) ...
//	t.StartStandby(ctx, &n)            // write its conf and start it (not yet in the topology)
//	t.JoinStandby(ctx, n)              // add it to the topology and save
//	t.RemoveStandby(ctx, n)            // undo any of the above, e.g. after a failure
//
// The caller holds the cluster's Lock throughout.

// maxPortProbe bounds how far PlanStandby looks for a free port above the cluster's ports.
const maxPortProbe = 100

// nodeNameRE: a node name is also its replication slot's name, which allows only lowercase
// letters, digits and underscores.
var nodeNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,30}$`)

// CheckNodeName validates the name of a new node.
func CheckNodeName(name string) error {
	if !nodeNameRE.MatchString(name) {
		return agerr.BadInputf("--name %q: a node name is 1-31 lowercase letters, digits or '_', starting with a letter (it names the node's replication slot)", name)
	}
	return nil
}

// PlanStandby describes a new standby without making anything: name ("" picks the first free
// standbyN), the first free port above the cluster's ports, its data folder and log. A name
// that is taken, by a node or by a leftover folder, is bad input.
func (t *Topology) PlanStandby(name string) (Node, error) {
	if name == "" {
		for i := 1; ; i++ {
			cand := fmt.Sprintf("standby%d", i)
			if t.Node(cand) == nil && !exists(t.nodeDataDir(cand)) {
				name = cand
				break
			}
		}
	}
	if err := CheckNodeName(name); err != nil {
		return Node{}, err
	}
	if t.Node(name) != nil {
		return Node{}, agerr.BadInputf("--name %s: cluster %s already has a node of that name (nodes: %s)", name, t.Name, strings.Join(t.NodeNames(), ", "))
	}
	if exists(t.nodeDataDir(name)) {
		return Node{}, agerr.BadInputf("--name %s: %s exists but is not a node of cluster %s; remove it or choose another name", name, t.nodeDataDir(name), t.Name)
	}
	maxPort := 0
	for _, n := range t.Nodes {
		maxPort = max(maxPort, n.Port)
	}
	n := Node{Name: name, Role: RoleStandby, Host: t.Primary().Host, DataDir: t.nodeDataDir(name),
		LogFile: filepath.Join(t.Dir, "logs", name+".log"), Slot: name}
	if t.Netns != nil {
		// In a namespace of its own, on an address of its own: nothing listens there yet.
		if err := t.planNetns(&n); err != nil {
			return Node{}, err
		}
		n.Port = maxPort + 1
		return n, nil
	}
	for p := maxPort + 1; p <= maxPort+maxPortProbe && p <= 65535; p++ {
		if checkPortFree(n.Host, p) == nil {
			n.Port = p
			return n, nil
		}
	}
	return Node{}, agerr.BadInputf("no free port in %d-%d on %s for a new standby", maxPort+1, maxPort+maxPortProbe, n.Host)
}

func (t *Topology) nodeDataDir(name string) string { return filepath.Join(t.Dir, "nodes", name) }

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// CreateSlot creates a physical replication slot on the primary that reserves WAL at once,
// so a standby made from a backup taken afterwards can always catch up. An existing slot of
// that name is kept.
func (t *Topology) CreateSlot(ctx context.Context, slot string) error {
	return t.createSlot(ctx, t.Primary(), slot)
}

// StartStandby writes the configuration of a planned standby whose data folder has been
// filled (by pg_basebackup or a restore), gives the folder to the servers' OS user, and starts
// it. On a cluster that models hosts, the node first gets a control group of its own with
// the same budget as the others (recorded in n.Group; RemoveStandby removes it); on one in
// network namespaces, its namespace and veth (PlanStandby chose them), and its exporter once
// it runs. It does not add the node to the topology (JoinStandby does).
func (t *Topology) StartStandby(ctx context.Context, n *Node) error {
	if n.Role != RoleStandby {
		return fmt.Errorf("start %s: not a standby", n.Name)
	}
	if _, err := os.Stat(filepath.Join(n.DataDir, "PG_VERSION")); err != nil {
		return fmt.Errorf("start %s: %s holds no data folder: %w", n.Name, n.DataDir, err)
	}
	if t.Hosts != nil && n.Group == nil {
		if err := t.makeGroup(n); err != nil {
			return fmt.Errorf("start %s: %w", n.Name, err)
		}
	}
	if n.Netns != nil {
		if err := t.joinNetns(n); err != nil {
			return fmt.Errorf("start %s: %w", n.Name, err)
		}
	}
	if err := t.writeConf(n); err != nil {
		return err
	}
	if err := t.startNode(ctx, n); err != nil {
		return err
	}
	return t.startExporter(ctx, n)
}

// JoinStandby adds a started standby to the topology and saves it atomically. On a cluster
// with synchronous commit, the primary's synchronous_standby_names is rewritten to count the
// new standby and reloaded.
func (t *Topology) JoinStandby(ctx context.Context, n Node) error {
	if t.Node(n.Name) != nil {
		return fmt.Errorf("join %s: already in the topology", n.Name)
	}
	t.Nodes = append(t.Nodes, n)
	if t.Commit == CommitSync {
		p := t.Primary()
		if err := t.writeConf(p); err != nil {
			t.Nodes = t.Nodes[:len(t.Nodes)-1]
			return err
		}
		if err := t.reload(ctx, p); err != nil {
			return fmt.Errorf("reload %s: %w", p.Name, err)
		}
	}
	return t.Save()
}

// WaitStreaming waits until the primary's pg_stat_replication shows the named standby streaming.
func (t *Topology) WaitStreaming(ctx context.Context, name string, timeout time.Duration) error {
	return t.waitStreaming(ctx, name, timeout)
}

// RemoveStandby undoes whatever part of adding n was done: it stops the server (immediate),
// drops its slot on the primary, removes its data folder and log, and, when it is in the
// topology, takes it out (rewriting the primary's synchronous_standby_names) and saves. It
// refuses the primary and anything outside the cluster's nodes folder.
func (t *Topology) RemoveStandby(ctx context.Context, n Node) error {
	if p := t.Primary(); p != nil && p.Name == n.Name {
		return fmt.Errorf("remove %s: it is the primary", n.Name)
	}
	if filepath.Dir(n.DataDir) != filepath.Join(t.Dir, "nodes") {
		return fmt.Errorf("refusing to remove %s: not in %s", n.DataDir, filepath.Join(t.Dir, "nodes"))
	}
	var errs []error
	if err := t.stopNodeNow(ctx, &n); err != nil {
		errs = append(errs, err)
	}
	if n.Slot != "" {
		if err := t.dropSlotWhenFree(ctx, n.Slot, 10*time.Second); err != nil {
			errs = append(errs, fmt.Errorf("drop slot %s: %w", n.Slot, err))
		}
	}
	if err := os.RemoveAll(n.DataDir); err != nil {
		errs = append(errs, err)
	}
	if err := os.Remove(n.LogFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	if n.Group != nil {
		errs = append(errs, n.Group.Remove())
	}
	if n.Netns != nil {
		errs = append(errs, t.removeNodeNetns(&n))
	}
	for i := range t.Nodes {
		if t.Nodes[i].Name != n.Name {
			continue
		}
		t.Nodes = append(t.Nodes[:i], t.Nodes[i+1:]...)
		if t.Commit == CommitSync {
			p := t.Primary()
			if err := t.writeConf(p); err != nil {
				errs = append(errs, err)
			} else if err := t.reload(ctx, p); err != nil {
				errs = append(errs, err)
			}
		}
		if err := t.Save(); err != nil {
			errs = append(errs, err)
		}
		break
	}
	return errors.Join(errs...)
}

// dropSlotWhenFree drops a slot once no walsender holds it (a backup's or a stopped
// standby's walsender may take a moment to exit). A missing slot is fine.
func (t *Topology) dropSlotWhenFree(ctx context.Context, slot string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := t.Connect(ctx, t.Primary())
		if err != nil {
			return err
		}
		var present, active bool
		err = c.QueryRow(ctx, `SELECT count(*) > 0, coalesce(bool_or(active), false) FROM pg_replication_slots WHERE slot_name = $1`, slot).
			Scan(&present, &active)
		if err == nil && present && !active {
			_, err = c.Exec(ctx, `SELECT pg_drop_replication_slot($1)`, slot)
		}
		c.Close(context.WithoutCancel(ctx))
		switch {
		case err != nil:
			return err
		case !present || !active:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("slot %s is still in use after %v", slot, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
