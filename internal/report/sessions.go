package report

import (
	"fmt"
	"net"
	"sort"
	"strings"

	"github.com/agbench/agbench/internal/analyze"
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

// landedRow is the sessions on one node in one role, per variant and point.
type landedRow struct {
	node, role string
	topology   string
	counts     map[*Variant][]float64
	seen       map[*Variant][]bool
	flags      []string
}

// SessionsTable is where each variant's sessions landed, shaped like the main table: one
// row per node and role (primary or standby, as pg_is_in_recovery() said when the session
// began) with the topology's role beside it, and per variant the sessions at each point of
// the sweep (the mean of the repeats; 0 where they were counted and none landed, '-' where
// they were not counted). A row is flagged in a note column (shown only when
// some row is) when the landed role differs from the topology's, or when a routed variant
// ran read-intent transactions on the primary.
// Empty when no step recorded its sessions (workloads that do not route).
func (e *Experiment) SessionsTable() Table {
	rows := e.landedRows()
	t := Table{Name: e.slug() + "-sessions", Title: e.name() + ": where sessions landed (sessions per " + e.pointHeader() + ")",
		Columns: []string{"node", "landed as", "topology"}}
	if len(rows) == 0 {
		return t
	}
	t.Groups = append(t.Groups, Group{Span: 2})
	for _, v := range e.Variants {
		t.Groups = append(t.Groups, Group{Name: v.Name, Span: len(e.Points)})
		for _, p := range e.Points {
			if e.Sweep {
				p = e.LoadName + " " + p // wide enough for the variant's name above
			}
			t.Columns = append(t.Columns, p)
		}
	}
	notes := false
	for _, r := range rows {
		notes = notes || len(r.flags) > 0
	}
	if notes {
		t.Groups = append(t.Groups, Group{Span: 1})
		t.Columns = append(t.Columns, "note")
	}
	for _, r := range rows {
		row := []Cell{txt(r.node), txt(r.role), txt(dash(r.topology))}
		for _, v := range e.Variants {
			for pi := range e.Points {
				switch {
				case r.seen[v] != nil && r.seen[v][pi]:
					row = append(row, num(r.counts[v][pi]))
				case recordedSessions(v.Cells[pi]):
					row = append(row, num(0)) // counted, and none landed here
				default:
					row = append(row, Cell{Text: "-", Num: true}) // not counted
				}
			}
		}
		if notes {
			row = append(row, txt(strings.Join(r.flags, "; ")))
		}
		t.add(row...)
	}
	return t
}

// landedRows gathers every variant's sessions by node and role, primaries first.
func (e *Experiment) landedRows() []*landedRow {
	rows := map[string]*landedRow{}
	var order []*landedRow
	for _, v := range e.Variants {
		names := nodeNamesOf(v.Run.Result.Meta)
		asked := map[*landedRow][]string{} // the points where the routing list asked for it
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
					r := rows[node+"|"+role]
					if r == nil {
						r = &landedRow{node: node, role: role, topology: topologyRole(v.Run.Result.Meta, node),
							counts: map[*Variant][]float64{}, seen: map[*Variant][]bool{}}
						if r.topology != "" && r.topology != role {
							r.flags = append(r.flags, "! topology says "+r.topology)
						}
						rows[node+"|"+role] = r
						order = append(order, r)
					}
					if r.counts[v] == nil {
						r.counts[v], r.seen[v] = make([]float64, len(e.Points)), make([]bool, len(e.Points))
					}
					r.counts[v][pi] += float64(s.Count) / float64(len(c.Steps))
					r.seen[v][pi] = true
				}
			}
			if onPrimary := c.Counters[result.ReadTxOnPrimary]; onPrimary > 0 && routed(v.Variant) {
				readTxNotes(order, v, pi, c, onPrimary, asked)
			}
		}
		for _, r := range order {
			if pts := asked[r]; len(pts) > 0 {
				r.flags = append(r.flags, fmt.Sprintf("%s: read-intent tx on the primary at %s %s, as its routing list asks", v.Name, e.pointHeader(), strings.Join(pts, ", ")))
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

// readTxNotes flags the primary's rows where a routed variant ran read-intent transactions
// at point pi: "!" where its routing list did not ask for the primary there; where it did,
// the point is kept in asked, for one note per variant.
func readTxNotes(order []*landedRow, v *Variant, pi int, c *Figures, onPrimary float64, asked map[*landedRow][]string) {
	for _, r := range order {
		if r.role != rolePrimary || r.seen[v] == nil || !r.seen[v][pi] {
			continue
		}
		if analyze.RoutedListAsks(v.Run.Result.Meta.Topology, r.node) {
			asked[r] = append(asked[r], c.Label)
		} else {
			r.flags = append(r.flags, fmt.Sprintf("! %s: %s read-intent tx on the primary at %s", v.Name, fmtNum(onPrimary), c.Label))
		}
	}
}

// recordedSessions is true when the steps of a cell counted where their sessions landed.
func recordedSessions(c *Figures) bool {
	if c == nil {
		return false
	}
	for _, st := range c.Steps {
		if len(st.Sessions) > 0 {
			return true
		}
	}
	return false
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
