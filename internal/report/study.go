package report

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/units"
)

// A report of several studies (the same experiment on modelled hosts and on one shared
// machine, as `make demo` runs it) shows their variants side by side, but compares
// variants only within one target: set against each other across two clusters, two
// variants measure the clusters, not what the variants change.

// Studies splits the experiment by the target its runs measured (targetKey), in the order
// the runs came: each part is the experiment as one study measured it, its variants named
// as that study's own, its title naming the study and its cluster. An experiment whose runs
// all measured one target is its own only study.
func (e *Experiment) Studies() []*Experiment {
	var keys []string
	byKey := map[string][]*Run{}
	for _, r := range e.Runs {
		k := targetKey(r.Result.Meta)
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], r)
	}
	if len(keys) < 2 {
		return []*Experiment{e}
	}
	out := make([]*Experiment, 0, len(keys))
	for _, k := range keys {
		out = append(out, e.study(byKey[k]))
	}
	return out
}

// study is the part of e that runs measured: their variants (copies, renamed as if the
// runs were the experiment's only ones) at the experiment's points.
func (e *Experiment) study(runs []*Run) *Experiment {
	s := *e
	s.Runs, s.Variants = runs, nil
	for _, v := range e.Variants {
		if slices.Contains(runs, v.Run) {
			c := *v
			c.Name = variantName(&s, v.Run, v.Variant)
			s.Variants = append(s.Variants, &c)
		}
	}
	var names []string
	for _, r := range runs {
		if n := studyName(r); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	s.Title = e.name() + " · " + strings.Join(names, ", ") + " (" + targetText(runs[0].Result.Meta) + ")"
	return &s
}

// targetKey identifies what a run measured: the machine it ran on, and the cluster by its
// name with its host model and links (not its nodes: a seeding adds one), or servers given
// by address (not the ports of the in-process listeners a routing comparison starts afresh
// each run).
func targetKey(m result.Meta) string {
	key := []string{m.Host.Hostname}
	if t := m.Topology; t != nil && t.Cluster != "" {
		key = append(key, t.Cluster, t.Hosts, t.Links)
	} else if t != nil {
		for _, n := range t.Nodes {
			key = append(key, n.Name+"@"+n.Addr)
		}
		if len(t.Nodes) == 0 {
			key = append(key, t.Listener) // sessions only through a listener the run did not start
		}
	}
	return strings.Join(key, "|")
}

// targetText names a run's target for a person: "cluster ror-hosts, each node a modelled
// host: …", "cluster ror-quick, its nodes sharing one machine", or the servers' addresses.
func targetText(m result.Meta) string {
	t := m.Topology
	switch {
	case t == nil:
		return "host " + m.Host.Hostname
	case t.Cluster != "" && t.Hosts != "":
		return "cluster " + t.Cluster + ", " + modelledHosts(t)
	case t.Cluster != "":
		return "cluster " + t.Cluster + ", its nodes sharing one machine"
	}
	var addrs []string
	for _, n := range t.Nodes {
		addrs = append(addrs, n.Name+" "+n.Addr)
	}
	if len(addrs) == 0 {
		return "host " + m.Host.Hostname
	}
	return "servers " + strings.Join(addrs, ", ")
}

// modelledHosts says in a few words what host each node of a modelled cluster was: its
// budget of cores and memory, and its IO limits (Topology.Hosts has the whole sentence).
func modelledHosts(t *result.Topology) string {
	var parts []string
	if t.HostCPUs > 0 {
		parts = append(parts, strconv.FormatFloat(t.HostCPUs, 'g', -1, 64)+" cores")
	}
	if t.HostMemoryBytes > 0 {
		parts = append(parts, units.FormatBytesShort(t.HostMemoryBytes)+" memory")
	}
	if io := t.HostIO; io != nil && (io.ReadBPS > 0 || io.WriteBPS > 0 || io.ReadIOPS > 0 || io.WriteIOPS > 0) {
		parts = append(parts, "IO limits")
	}
	if len(parts) == 0 {
		return "each node a modelled host"
	}
	return "each node a modelled host of " + strings.Join(parts, ", ")
}

// studyName is the study a run belongs to, or the run's label when it ran on its own.
func studyName(r *Run) string {
	if study, ok := studyOf(r); ok {
		return study
	}
	return r.Label
}

// studyOf is the study of a run `agbench run` made, from its folder: <study>-<time>/NN-name/
// <time>-command.
func studyOf(r *Run) (string, bool) {
	dir := filepath.Dir(runDir(r.Path)) // <study>/NN-name
	if !studyFolder.MatchString(filepath.Base(dir)) {
		return "", false
	}
	return studyTime.ReplaceAllString(filepath.Base(filepath.Dir(dir)), ""), true
}
