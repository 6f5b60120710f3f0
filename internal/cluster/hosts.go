package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cgroup"
	"github.com/agbench/agbench/internal/netns"
	"github.com/agbench/agbench/internal/pgbin"
	"github.com/agbench/agbench/internal/status"
)

// The modelled hosts' records (status.go's types).
type (
	HostModel = status.HostModel
	HostUse   = status.HostUse
	IORates   = status.IORates
)

// minNodeMemory is what a node needs beyond shared_buffers: its processes' own memory and
// a little page cache for WAL and catalogs.
const minNodeMemory = 64 << 20

// defaultSharedBuffers is PostgreSQL's default shared_buffers.
const defaultSharedBuffers = 128 << 20

// sharedBuffersBytes reads a shared_buffers setting (8kB pages without a unit).
func sharedBuffersBytes(v string) (int64, error) {
	v = strings.TrimSpace(v)
	units := map[string]int64{"kB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40, "": 8 << 10}
	num := strings.TrimRightFunc(v, func(r rune) bool { return r < '0' || r > '9' })
	unit := strings.TrimSpace(v[len(num):])
	m, ok := units[unit]
	n, err := strconv.ParseInt(num, 10, 64)
	if !ok || err != nil || n < 0 {
		return 0, fmt.Errorf("shared_buffers %q: want a number with kB, MB, GB or TB, or 8kB pages", v)
	}
	return n * m, nil
}

// checkHosts validates a host budget against this machine without changing anything. An
// automatic CPU weight (cgroup.AutoCPUShares) is turned into the number it stands for.
func (o *CreateOptions) checkHosts(settings map[string]string) (*cgroup.System, error) {
	if o.Host.CPUShares == cgroup.AutoCPUShares {
		o.Host.CPUShares = cgroup.SharesFor(o.Host.CPUs)
	}
	if o.Host.CPUs == 0 && o.Host.Memory == 0 && !o.Host.HasIO() {
		if o.Host.CPUShares != 0 {
			return nil, agerr.BadInputf("--host-cpu-shares: a CPU weight needs a modelled host (--host-cpus)")
		}
		return nil, nil
	}
	if o.Host.Memory > 0 {
		sb := int64(defaultSharedBuffers)
		if v, ok := settings["shared_buffers"]; ok {
			var err error
			if sb, err = sharedBuffersBytes(v); err != nil {
				return nil, agerr.BadInputf("--set %v", err)
			}
		}
		if need := sb + minNodeMemory; o.Host.Memory < need {
			return nil, agerr.BadInputf("--host-memory %s: a node needs at least %s to start and run (shared_buffers %s plus %s for its processes); raise --host-memory or lower shared_buffers (--set shared_buffers=32MB)",
				status.FormatMiB(o.Host.Memory), status.FormatMiB(need), status.FormatMiB(sb), status.FormatMiB(minNodeMemory))
		}
	}
	// The budget is checked against the machine before root is asked for, so that a bad
	// number is named as such whoever runs agbench; what cannot be read without root is
	// the need of root.
	sys, err := cgroup.Inspect()
	if err != nil {
		if rerr := cgroup.RequireRoot(); rerr != nil {
			return nil, rerr // as before: no budget can be checked, and root is missing anyway
		}
		return nil, err
	}
	if err := sys.Check(o.Host, o.Standbys+1); err != nil {
		return nil, err
	}
	if o.Host.HasIO() {
		if _, err := cgroup.DeviceOf(ClusterDir(o.Home, o.Name)); err != nil {
			return nil, err
		}
	}
	if err := cgroup.RequireRoot(); err != nil {
		return nil, err
	}
	return sys, nil
}

// groupName is a node's control group: unique to the cluster's folder, so that two clusters
// of one name under different homes never share one.
func (t *Topology) groupName(n *Node) string { return t.groupPrefix() + n.Name }

// groupPrefix starts the name of every control group of this cluster's nodes.
func (t *Topology) groupPrefix() string { return GroupPrefix(t.Dir, t.Name) }

// GroupPrefix starts the name of every control group of the nodes of the cluster name whose
// folder is dir: the name, and a hash of the folder, so that clusters of one name in two
// homes (two checkouts' tests, two users) never share or remove each other's groups.
func GroupPrefix(dir, name string) string {
	h := sha256.Sum256([]byte(dir))
	return cgroup.GroupPrefix + name + "-" + hex.EncodeToString(h[:4]) + "-"
}

// ioDevice finds the disk that holds the cluster's data when its hosts limit IO.
func (t *Topology) ioDevice() error {
	if !t.Hosts.HasIO() || t.Hosts.IODevice != nil {
		return nil
	}
	d, err := cgroup.DeviceOf(filepath.Join(t.Dir, "nodes"))
	if err != nil {
		return err
	}
	t.Hosts.IODevice = d
	return nil
}

// makeGroups gives every node its control group, recording each in the topology as it is
// made, so that a create cut short removes it. CPUs are chosen around the groups agbench
// already has on this machine (other clusters').
func (t *Topology) makeGroups(sys *cgroup.System) error {
	if sys == nil {
		return nil
	}
	if err := t.ioDevice(); err != nil {
		return err
	}
	nb := sys.Neighbours()
	cpus := sys.Place(t.Hosts.Budget, t.NodeNames(), nb)
	for i := range t.Nodes {
		n := &t.Nodes[i]
		g, err := sys.Create(t.groupName(n), t.Hosts.Budget, cpus[i], t.Hosts.IODevice)
		if err != nil {
			return err
		}
		g.Beside = cgroup.NeighbourNames(nb)
		n.Group = g
	}
	return nil
}

// makeGroup gives a node that joins a modelled cluster its control group, with the same
// budget as the others, on the CPUs least used by agbench's groups.
func (t *Topology) makeGroup(n *Node) error {
	if t.Hosts == nil {
		return nil
	}
	sys, err := cgroup.Detect()
	if err != nil {
		return err
	}
	if err := t.ioDevice(); err != nil {
		return err
	}
	nb := sys.Neighbours()
	g, err := sys.Create(t.groupName(n), t.Hosts.Budget, sys.Place(t.Hosts.Budget, []string{n.Name}, nb)[0], t.Hosts.IODevice)
	if err != nil {
		return err
	}
	g.Beside = cgroup.NeighbourNames(nb)
	if t.Hosts.Lifted {
		if err := g.Set(sys, cgroup.Budget{}, sys.CPUs); err != nil {
			return errors.Join(err, g.Remove())
		}
	}
	n.Group = g
	return nil
}

// SetBudgets lifts the budgets of a modelled cluster's nodes (on false) or puts them back
// (on true), while the nodes run: lifted, each node's group keeps counting its use but holds
// it to nothing (every CPU, no quota, the kernel's CPU weight, no memory or IO limit), so
// that one cluster, with the same data and placement on disk, can be measured with and
// without its budgets. Put back, the CPUs are chosen anew around the groups agbench has on
// this machine, as create does. The topology records the state. It needs root; the caller
// holds the cluster's lock (Lock).
func (t *Topology) SetBudgets(on bool) error {
	if t.Hosts == nil {
		return agerr.BadInputf("cluster %s has no modelled hosts: there are no budgets to lift or put back (create it with --host-cpus, --host-memory or an IO limit)", t.Name)
	}
	if err := cgroup.RequireRoot(); err != nil {
		return err
	}
	sys, err := cgroup.Detect()
	if err != nil {
		return err
	}
	var groups []*cgroup.Group
	for i := range t.Nodes {
		g := t.Nodes[i].Group
		if g == nil {
			return fmt.Errorf("node %s has no control group in the topology", t.Nodes[i].Name)
		}
		if !g.Exists() {
			return fmt.Errorf("node %s: its control group %s is gone (removed by hand?): destroy and create the cluster again", t.Nodes[i].Name, g.Name)
		}
		groups = append(groups, g)
	}
	var place [][]int
	var others []cgroup.Neighbour
	if on {
		// Around other clusters' groups, not this one's own (lifted, they span every CPU).
		for _, nb := range sys.Neighbours() {
			if !strings.HasPrefix(nb.Name, t.groupPrefix()) {
				others = append(others, nb)
			}
		}
		place = sys.Place(t.Hosts.Budget, t.NodeNames(), others)
	}
	var errs []error
	for i, g := range groups {
		if on {
			errs = append(errs, g.Set(sys, t.Hosts.Budget, place[i]))
			g.Beside = cgroup.NeighbourNames(others)
		} else {
			errs = append(errs, g.Set(sys, cgroup.Budget{}, sys.CPUs))
			g.Beside = nil
		}
	}
	t.Hosts.Lifted = !on
	// What was written is recorded even when a node failed, so that status tells the truth.
	return errors.Join(errors.Join(errs...), t.Save())
}

// removeGroups removes every node's control group (killing what a crash left in it), and
// any other group named after this cluster's folder: one a node being added got before a
// crash kept it out of the topology.
func (t *Topology) removeGroups() error {
	var errs []error
	for i := range t.Nodes {
		if g := t.Nodes[i].Group; g != nil {
			errs = append(errs, g.Remove())
		}
	}
	if t.Hosts != nil {
		if sys, err := cgroup.Inspect(); err == nil {
			errs = append(errs, sys.RemoveNamed(t.groupPrefix()))
		}
	}
	return errors.Join(errs...)
}

// pgCtlStart runs pg_ctl start for a node. A node with a control group starts inside it
// (cgroup.Group.Start), so pg_ctl, the postmaster and every backend it forks are born there;
// a node with a network namespace starts inside that (netns.Enter), so they listen there.
func (t *Topology) pgCtlStart(ctx context.Context, n *Node, args ...string) error {
	if n.Group == nil && n.Netns == nil {
		_, err := t.install().Run(ctx, t.user(), "pg_ctl", args...)
		return err
	}
	if n.Group != nil && !n.Group.Exists() {
		return fmt.Errorf("start %s: its control group %s is gone (removed by hand?): destroy and create the cluster again", n.Name, n.Group.Name)
	}
	cmd := t.user().Command(ctx, t.PG.Path("pg_ctl"), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if n.Netns != nil {
		netns.Enter(cmd, n.Netns.Namespace)
	}
	if n.Group != nil {
		if err := n.Group.Start(cmd); err != nil {
			return fmt.Errorf("start %s in its control group: %w", n.Name, err)
		}
	} else if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s in its network namespace: %w", n.Name, err)
	}
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &pgbin.ToolError{Tool: "pg_ctl", Args: args, Output: strings.TrimSpace(out.String()), Err: err}
	}
	return nil
}

// hostUse reads every node's group twice, status.HostUseInterval apart.
func (t *Topology) hostUse(ctx context.Context) map[string]*HostUse {
	if t.Hosts == nil {
		return nil
	}
	first := map[string]cgroup.Usage{}
	out := map[string]*HostUse{}
	var neighbours []cgroup.Neighbour
	if sys, err := cgroup.Inspect(); err == nil {
		neighbours = sys.Neighbours()
	}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		if n.Group == nil {
			continue
		}
		h := &HostUse{Group: n.Group.Name, CPUs: n.Group.Budget.CPUs, CPUSet: n.Group.CPUList, Memory: n.Group.Budget.Memory,
			Neighbours: t.neighboursOf(n, neighbours)}
		if n.Group.Budget.HasIO() {
			b := n.Group.Budget
			h.IO = &cgroup.Budget{ReadBPS: b.ReadBPS, WriteBPS: b.WriteBPS, ReadIOPS: b.ReadIOPS, WriteIOPS: b.WriteIOPS}
		}
		out[n.Name] = h
		u, err := n.Group.Read()
		if err != nil {
			h.Error = err.Error()
			continue
		}
		first[n.Name] = u
	}
	select {
	case <-ctx.Done():
		return out
	case <-time.After(status.HostUseInterval):
	}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		a, ok := first[n.Name]
		if !ok {
			continue
		}
		h := out[n.Name]
		b, err := n.Group.Read()
		if err != nil {
			h.Error = err.Error()
			continue
		}
		d := cgroup.Diff(a, b)
		h.Cores, h.Used, h.Cache = d.Cores, d.Memory, d.Cache
		if d.HasThrottle {
			s := d.ThrottledShare
			h.ThrottledShare = &s
		}
		if d.HasIO {
			h.IOUse = &IORates{ReadBPS: d.ReadBPS, WriteBPS: d.WriteBPS, ReadIOPS: d.ReadIOPS, WriteIOPS: d.WriteIOPS}
		}
		procs, _ := n.Group.Procs()
		h.Processes = len(procs)
	}
	return out
}

// neighboursOf names agbench's groups of other clusters pinned to any of n's CPUs.
func (t *Topology) neighboursOf(n *Node, all []cgroup.Neighbour) []string {
	mine := n.Group.CPUs()
	own := map[string]bool{}
	for i := range t.Nodes {
		if g := t.Nodes[i].Group; g != nil {
			own[g.Name] = true
		}
	}
	var out []string
	for _, o := range all {
		if own[o.Name] {
			continue
		}
		for _, c := range o.CPUs {
			if slices.Contains(mine, c) {
				out = append(out, o.Name)
				break
			}
		}
	}
	return out
}
