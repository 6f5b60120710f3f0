package report

import (
	"fmt"
	"net"
	"sort"
	"strings"

	"github.com/agbench/agbench/internal/result"
)

// Roles of a node as the sessions-landed table shows them.
const (
	rolePrimary = "primary"
	roleStandby = "standby"
)

// nodeNames maps every way a result may name one of its topology's nodes (its name, the
// form of the name used in figure names, its address) to the topology's name.
type nodeNames map[string]string

// nodeNamesOf builds the map of a run's topology; a run without one maps nothing.
func nodeNamesOf(m result.Meta) nodeNames {
	out := nodeNames{}
	if m.Topology == nil {
		return out
	}
	for _, n := range m.Topology.Nodes {
		out[n.Name] = n.Name
		out[result.SeriesNodeName(n.Name)] = n.Name
		if n.Addr != "" {
			out[n.Addr] = n.Name
			if host, port, err := net.SplitHostPort(n.Addr); err == nil && (host == "127.0.0.1" || host == "::1") {
				out[net.JoinHostPort("localhost", port)] = n.Name
			}
		}
	}
	return out
}

// name is the topology's name for raw, or raw when the topology does not know it.
func (nn nodeNames) name(raw string) string {
	if n, ok := nn[raw]; ok {
		return n
	}
	return raw
}

// topologyRole is the role the run's topology gives a node, "" when it does not know it.
func topologyRole(m result.Meta, node string) string {
	if m.Topology == nil {
		return ""
	}
	for _, n := range m.Topology.Nodes {
		if n.Name == node {
			return n.Role
		}
	}
	return ""
}

// landedRow is one variant's sessions on one node in one role, per point.
type landedRow struct {
	variant *Variant
	node    string
	role    string
	counts  []float64
	seen    []bool
	flags   []string
}

// SessionsTable is where each variant's sessions landed: one row per variant, node and role
// (primary or standby, as pg_is_in_recovery() said when the session began), the sessions at
// each point of the sweep (the mean of the repeats), and the topology's role beside it.
// A row is flagged when the node's landed role differs from the topology's, or when a
// routed variant ran read-intent transactions on the primary. Empty when no step recorded
// its sessions (workloads that do not route).
func (e *Experiment) SessionsTable() Table {
	point := e.pointHeader()
	t := Table{Name: e.slug() + "-sessions", Title: e.name() + ": where sessions landed (sessions per " + point + ")",
		Columns: []string{"variant", "node", "landed as", "topology"}}
	for _, p := range e.Points {
		if e.Sweep {
			t.Columns = append(t.Columns, point+" "+p)
		} else {
			t.Columns = append(t.Columns, p)
		}
	}
	t.Columns = append(t.Columns, "note")
	for _, v := range e.Variants {
		for _, r := range e.landedRows(v) {
			topo := topologyRole(v.Run.Result.Meta, r.node)
			row := []Cell{txt(v.Name), txt(r.node), txt(r.role), txt(dash(topo))}
			for pi := range e.Points {
				if r.seen[pi] {
					row = append(row, num(r.counts[pi]))
				} else {
					row = append(row, Cell{Text: "-", Num: true})
				}
			}
			flags := r.flags
			if topo != "" && topo != r.role {
				flags = append([]string{"! topology says " + topo}, flags...)
			}
			row = append(row, txt(strings.Join(flags, "; ")))
			t.add(row...)
		}
	}
	return t
}

// landedRows gathers a variant's sessions by node and role, primaries first.
func (e *Experiment) landedRows(v *Variant) []*landedRow {
	names := nodeNamesOf(v.Run.Result.Meta)
	rows := map[string]*landedRow{}
	var order []*landedRow
	for pi, c := range v.Cells {
		if c == nil {
			continue
		}
		for _, st := range c.Steps {
			for _, s := range st.Sessions {
				role := rolePrimary
				if s.InRecovery {
					role = roleStandby
				}
				node := names.name(s.Node)
				key := node + "|" + role
				r := rows[key]
				if r == nil {
					r = &landedRow{variant: v, node: node, role: role, counts: make([]float64, len(e.Points)), seen: make([]bool, len(e.Points))}
					rows[key] = r
					order = append(order, r)
				}
				r.counts[pi] += float64(s.Count) / float64(len(c.Steps))
				r.seen[pi] = true
			}
		}
		if onPrimary := c.Counters[result.ReadTxOnPrimary]; onPrimary > 0 && routed(v.Variant) {
			for _, r := range order {
				if r.role == rolePrimary && r.seen[pi] {
					r.flags = append(r.flags, fmt.Sprintf("! %s read-intent tx on the primary at %s", fmtNum(onPrimary), c.Label))
				}
			}
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].role != order[j].role {
			return order[i].role == rolePrimary
		}
		return order[i].node < order[j].node
	})
	return order
}

// routed is true for a variant that routes read intent to the standbys ("routing=on").
func routed(variant string) bool {
	k, v, ok := strings.Cut(variant, "=")
	return ok && k == "routing" && (v == "on" || v == "true")
}

func dash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// figure labels a database sampler's figure ("pg.<node>.…", and the standby of
// "pg.<node>.standby.<standby>.…") with the topology's names of its nodes (a name with a
// dot shows as it is, not in the figure names' form); other names are unchanged. The label
// is for a person: it is not parsed again.
func (nn nodeNames) figure(name string) string {
	if node, standby, fig, ok := result.ParsePGStandby(name); ok {
		return result.PGPrefix + nn.name(node) + ".standby." + nn.name(standby) + "." + fig
	}
	if node, fig, ok := result.ParsePGName(name); ok {
		return result.PGPrefix + nn.name(node) + "." + fig
	}
	return name
}
