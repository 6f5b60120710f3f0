package report

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agbench/agbench/internal/result"
)

// SetupDifferences lists what differs between the set-ups of two runs A and B: the agbench
// that ran them, the machine, the server and its settings, the topology (cluster, commit
// mode, nodes and their roles, listener, routing list, host model, links) and the command's
// configuration; one line each ("hosts: A each node a modelled host: … · B budgets lifted:
// …"). A difference of figures may come from any of them, so agbench compare names them.
// Addresses, ports, seeds, result folders and times, which change from run to run, are left
// out.
func SetupDifferences(a, b *result.Result) []string {
	var out []string
	add := func(what, va, vb string) {
		if va != vb {
			out = append(out, fmt.Sprintf("%s: A %s · B %s", what, orNone(va), orNone(vb)))
		}
	}
	add("agbench", a.Meta.ToolVersion, b.Meta.ToolVersion)
	ha, hb := a.Meta.Host, b.Meta.Host
	add("machine", fmt.Sprintf("%s, %d CPUs, %s", ha.Hostname, ha.Cores, ha.Kernel), fmt.Sprintf("%s, %d CPUs, %s", hb.Hostname, hb.Cores, hb.Kernel))
	sa, sb := a.Meta.Server, b.Meta.Server
	add("server", serverVersion(sa), serverVersion(sb))
	if sa != nil && sb != nil {
		for _, k := range unionKeys(sa.Settings, sb.Settings) {
			add(k, sa.Settings[k], sb.Settings[k])
		}
	}
	ta, tb := a.Meta.Topology, b.Meta.Topology
	if ta == nil {
		ta = &result.Topology{}
	}
	if tb == nil {
		tb = &result.Topology{}
	}
	add("cluster", ta.Cluster, tb.Cluster)
	add("commit", ta.Commit, tb.Commit)
	add("nodes", nodeRoles(ta.Nodes), nodeRoles(tb.Nodes))
	add("listener", yes(ta.Listener != ""), yes(tb.Listener != ""))
	add("routing list", ta.RoutingList, tb.RoutingList)
	add("hosts", ta.Hosts, tb.Hosts)
	add("links", ta.Links, tb.Links)
	ca, cb := configStrings(a.Meta.Config), configStrings(b.Meta.Config)
	for _, k := range unionKeys(ca, cb) {
		add(k, ca[k], cb[k])
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func serverVersion(s *result.Server) string {
	if s == nil {
		return ""
	}
	return s.Version
}

func nodeRoles(ns []result.Node) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = n.Name + " (" + n.Role + ")"
	}
	return strings.Join(parts, ", ")
}

// configStrings writes a run's configuration values as text (JSON for lists and maps),
// without what differs from run to run by nature.
func configStrings(c map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range c {
		if k == "results" || k == "seed" {
			continue
		}
		switch v := v.(type) {
		case string:
			out[k] = v
		default:
			b, err := json.Marshal(v)
			if err != nil {
				b = []byte(fmt.Sprint(v))
			}
			out[k] = string(b)
		}
	}
	return out
}

func unionKeys(a, b map[string]string) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
