package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cgroup"
	"github.com/agbench/agbench/internal/pgbin"
)

// HostModel is how a cluster models separate hosts on one machine: every node in a control
// group of its own with this budget. Absent from a topology: the nodes share the machine.
type HostModel struct {
	// Kind names the mechanism: "cgroup v1" or "cgroup v2".
	Kind string `json:"kind"`
	// CPUs is each node's CPU budget in cores (0: no CPU budget).
	CPUs float64 `json:"cpus,omitempty"`
	// Memory is each node's memory limit in bytes, page cache included (0: none).
	Memory int64 `json:"memory_bytes,omitempty"`
	// MachineCPUs is how many CPUs the machine had when the cluster was made.
	MachineCPUs int `json:"machine_cpus"`
}

// String describes the model in one line, as reports show it.
func (h *HostModel) String() string {
	if h == nil {
		return "nodes share one host (no budgets)"
	}
	var parts []string
	if h.CPUs > 0 {
		parts = append(parts, strconv.FormatFloat(h.CPUs, 'g', 4, 64)+" cores")
	}
	if h.Memory > 0 {
		parts = append(parts, formatMiB(h.Memory)+" memory (page cache included)")
	}
	return fmt.Sprintf("each node a modelled host: %s (%s, machine of %d CPUs)", strings.Join(parts, ", "), h.Kind, h.MachineCPUs)
}

func formatMiB(n int64) string {
	if n%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB", n>>30)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

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

// checkHosts validates a host budget against this machine without changing anything.
func (o *CreateOptions) checkHosts(settings map[string]string) (*cgroup.System, error) {
	if o.HostCPUs == 0 && o.HostMemory == 0 {
		return nil, nil
	}
	if o.HostMemory > 0 {
		sb := int64(defaultSharedBuffers)
		if v, ok := settings["shared_buffers"]; ok {
			var err error
			if sb, err = sharedBuffersBytes(v); err != nil {
				return nil, agerr.BadInputf("--set %v", err)
			}
		}
		if need := sb + minNodeMemory; o.HostMemory < need {
			return nil, agerr.BadInputf("--host-memory %s: a node needs at least %s to start and run (shared_buffers %s plus %s for its processes); raise --host-memory or lower shared_buffers (--set shared_buffers=32MB)",
				formatMiB(o.HostMemory), formatMiB(need), formatMiB(sb), formatMiB(minNodeMemory))
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
	if err := sys.Check(cgroup.Budget{CPUs: o.HostCPUs, Memory: o.HostMemory}, o.Standbys+1); err != nil {
		return nil, err
	}
	if err := cgroup.RequireRoot(); err != nil {
		return nil, err
	}
	return sys, nil
}

// groupName is a node's control group: unique to the cluster's folder, so that two clusters
// of one name under different homes never share one.
func (t *Topology) groupName(n *Node) string {
	h := sha256.Sum256([]byte(t.Dir))
	return "agbench-" + t.Name + "-" + hex.EncodeToString(h[:4]) + "-" + n.Name
}

// makeGroups gives every node its control group, recording each in the topology before it
// is made, so that a create cut short removes it.
func (t *Topology) makeGroups(sys *cgroup.System) error {
	if sys == nil {
		return nil
	}
	b := cgroup.Budget{CPUs: t.Hosts.CPUs, Memory: t.Hosts.Memory}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		g, err := sys.Create(t.groupName(n), b, sys.CPUSet(b, i))
		if err != nil {
			return err
		}
		n.Group = g
	}
	return nil
}

// removeGroups removes every node's control group (killing what a crash left in it).
func (t *Topology) removeGroups() error {
	var errs []error
	for i := range t.Nodes {
		if g := t.Nodes[i].Group; g != nil {
			errs = append(errs, g.Remove())
		}
	}
	return errors.Join(errs...)
}

// pgCtlStart runs pg_ctl start for a node. A node with a control group starts inside it:
// the shell that will exec pg_ctl waits on its stdin until agbench has moved it into the
// group, so pg_ctl, the postmaster and every backend it forks are born there.
func (t *Topology) pgCtlStart(ctx context.Context, n *Node, args ...string) error {
	if n.Group == nil {
		_, err := t.install().Run(ctx, t.user(), "pg_ctl", args...)
		return err
	}
	if !n.Group.Exists() {
		return fmt.Errorf("start %s: its control group %s is gone (removed by hand?): destroy and create the cluster again", n.Name, n.Group.Name)
	}
	cmd := t.user().Command(ctx, "/bin/sh", append([]string{"-c", `read go || exit 1; exec "$0" "$@"`, t.PG.Path("pg_ctl")}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	gate, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	if err := n.Group.Enter(cmd.Process.Pid); err != nil {
		gate.Close() // the shell exits without starting anything
		cmd.Wait()
		return fmt.Errorf("start %s in its control group: %w", n.Name, err)
	}
	_, err = gate.Write([]byte("go\n"))
	gate.Close()
	if err := errors.Join(err, cmd.Wait()); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &pgbin.ToolError{Tool: "pg_ctl", Args: args, Output: strings.TrimSpace(out.String()), Err: err}
	}
	return nil
}

// HostUse is a node's modelled host: its budget and what it uses.
type HostUse struct {
	Group     string  `json:"group"`
	CPUs      float64 `json:"cpu_budget,omitempty"`
	CPUSet    string  `json:"cpuset"`
	Memory    int64   `json:"memory_budget_bytes,omitempty"`
	Processes int     `json:"processes"`
	// Over the status's sampling interval:
	Cores          float64  `json:"cpu_cores"`
	ThrottledShare *float64 `json:"throttled_share,omitempty"`
	Used           int64    `json:"memory_bytes"`
	Cache          int64    `json:"page_cache_bytes"`
	Error          string   `json:"error,omitempty"`
}

// hostUseInterval is how long status watches the groups to tell their CPU use.
const hostUseInterval = 500 * time.Millisecond

// hostUse reads every node's group twice, hostUseInterval apart.
func (t *Topology) hostUse(ctx context.Context) map[string]*HostUse {
	if t.Hosts == nil {
		return nil
	}
	first := map[string]cgroup.Usage{}
	out := map[string]*HostUse{}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		if n.Group == nil {
			continue
		}
		h := &HostUse{Group: n.Group.Name, CPUs: n.Group.Budget.CPUs, CPUSet: n.Group.CPUList, Memory: n.Group.Budget.Memory}
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
	case <-time.After(hostUseInterval):
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
		procs, _ := n.Group.Procs()
		h.Processes = len(procs)
	}
	return out
}
