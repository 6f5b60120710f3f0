package analyze

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/routing"
)

// Read intent: sessions that declared read intent belong on a standby whenever
// the target has one to reach (a standby given, or a listener that routes), and a routing
// comparison's routing=on variant sends them there. Where they landed is read from the
// steps' sessions (stress, scan: one session per thread, pg_is_in_recovery() asked when it
// began) or, for tpcc, from its counters of read transactions by where they ran.

// Read-intent units: what a run counted where it landed.
const (
	unitSessions     = "sessions"
	unitTransactions = "transactions"
)

// ReadIntentConfig is the result's config key saying the sessions' intent ("read-only",
// "read-write"), as stress and scan record it; tpcc records ReadIntentTPCCConfig.
const (
	ReadIntentConfig     = "intent"
	ReadIntentValue      = "read-only"
	ReadIntentTPCCConfig = "read_intent"
	routingParam         = "routing"
)

// readIntentOf counts the read intent of a variant's steps that belonged on a standby, and
// how much of it found itself on one: tpcc's read transactions when the run declared them,
// else, for the commands that record their sessions' intent (stress, scan), the sessions of
// a read-only run whose target had a standby to reach, or of a routing=on variant. What
// landed on the primary where a routing=on variant's routing list asks for it (routedList)
// is counted in asked, not held against the run.
func readIntentOf(r *result.Result, steps []result.Step) readIntent {
	if v, _ := r.Meta.Config[ReadIntentTPCCConfig].(bool); v {
		return readTransactionsOf(r.Meta.Topology, steps)
	}
	intent, ok := r.Meta.Config[ReadIntentConfig].(string)
	if !ok { // not a command whose every session is one of the load's (tpcc's are not)
		return readIntent{}
	}
	ri := readIntent{unit: unitSessions}
	seen := map[string]bool{}
	for _, st := range steps {
		var list *routedList
		switch st.Params[routingParam] {
		case "off":
			continue
		case "on":
			list = listOf(r.Meta.Topology)
		default:
			if intent != ReadIntentValue || !standbyReachable(r.Meta.Topology) {
				continue
			}
		}
		for _, s := range st.Sessions {
			ri.all += int64(s.Count)
			switch {
			case s.InRecovery:
				ri.onStandby += int64(s.Count)
			case list.asks(s.Node):
				ri.asked += int64(s.Count)
			case !seen[s.Node]:
				seen[s.Node] = true
				ri.primaries = append(ri.primaries, s.Node)
			}
		}
		ri.judged(list)
	}
	sort.Strings(ri.primaries)
	return ri
}

// readTransactionsOf counts tpcc's read transactions of the routed steps by where they ran;
// those on the primary are asked for when the routing list's first entry names the
// topology's primary.
func readTransactionsOf(topo *result.Topology, steps []result.Step) readIntent {
	ri := readIntent{unit: unitTransactions}
	list := listOf(topo)
	for _, st := range steps {
		if st.Params[routingParam] == "off" {
			continue
		}
		on, ok := st.Counters[result.ReadTxOnStandby]
		if !ok {
			continue
		}
		onPrimary := int64(st.Counters[result.ReadTxOnPrimary])
		ri.all += int64(on) + onPrimary
		ri.onStandby += int64(on)
		if st.Params[routingParam] == "on" {
			if list.asks(primaryOf(topo)) {
				ri.asked += onPrimary
			}
			ri.judged(list)
		}
	}
	return ri
}

// readIntent is what readIntentOf counted: all the read intent that belonged on a standby,
// what landed on one, what landed on a primary the routing list asks for (asked), the
// nodes where the rest landed (primaries), and the list it was judged against.
type readIntent struct {
	all, onStandby, asked int64
	unit                  string
	primaries             []string
	list                  *routedList
}

// judged keeps the routing list the read intent of a routed step was judged against.
func (ri *readIntent) judged(l *routedList) {
	if l != nil && ri.list == nil {
		ri.list = l
	}
}

// routedList is the routing list a routing=on variant's listener routed by: the cluster's
// (result.Topology.RoutingList), or, without one, the listener's default of every standby
// as one load-balanced set, then the primary. Only its first entry matters here: read
// intent on a primary is asked for when the list puts that node first.
type routedList struct {
	text  string   // the list as a verdict names it
	first []string // the nodes of its first entry: where read intent is asked to go
}

// listOf is the routing list of a routing=on variant on topo, nil when the list recorded
// does not parse (it is then not known what it asked for).
func listOf(topo *result.Topology) *routedList {
	if topo != nil && topo.RoutingList != "" {
		l, err := routing.Parse(topo.RoutingList)
		if err != nil || len(l.Entries) == 0 {
			return nil
		}
		return &routedList{text: "routing list " + l.String(), first: l.Entries[0]}
	}
	// The default list is made afresh from the roles when a session is routed: whichever
	// node is then the primary is its last entry, never its first.
	return &routedList{text: "the default routing list (every standby, then the primary)"}
}

// asks reports whether read intent on node is what the list asks for: node is in its first
// entry. A node listed later is a fallback, taken only when every node before it was down,
// lagging or refusing sessions: read intent there did not go where the list asks first.
func (l *routedList) asks(node string) bool {
	return l != nil && node != "" && slices.Contains(l.first, node)
}

// RoutedListAsks reports whether the routing list a routing=on variant on topo routed by
// asks for read intent on node (node is in its first entry), so that a table can tell read
// intent on the primary by design from read intent that fell back there.
func RoutedListAsks(topo *result.Topology, node string) bool { return listOf(topo).asks(node) }

// primaryOf is the name of the node the topology records as the primary ("" when none).
func primaryOf(topo *result.Topology) string {
	if topo == nil {
		return ""
	}
	for _, n := range topo.Nodes {
		if n.Role == "primary" {
			return n.Name
		}
	}
	return ""
}

// standbyReachable says whether read intent had a standby to go to: a standby in the
// topology, or a listener that routes it.
func standbyReachable(t *result.Topology) bool {
	if t == nil {
		return false
	}
	return t.Listener != "" || slices.ContainsFunc(t.Nodes, func(n result.Node) bool { return n.Role == "standby" })
}

// readIntentVerdict fires when read intent that belonged on a standby ran elsewhere, and
// not where the routing list of a routing=on variant asks for it (a primary in the list's
// first entry takes read intent by design): the run then measured the primary. Against a
// list that names the primary only after standbys, it says the run measured the fallback.
func readIntentVerdict(f Facts) *Verdict {
	off := f.ReadIntentSessions - f.ReadIntentOnStandby - f.ReadIntentAsked
	if f.ReadIntentSessions <= 0 || off <= 0 {
		return nil
	}
	unit := f.ReadIntentUnit
	if unit == "" {
		unit = unitSessions + " (or " + unitTransactions + ")"
	}
	where := "did not run on a standby"
	if len(f.ReadIntentPrimaries) > 0 {
		where = "ran on the primary (" + strings.Join(f.ReadIntentPrimaries, ", ") + "), not on a standby"
	}
	why := "(a standby down, or a routing list that falls back to the primary)"
	if f.ReadIntentList != "" {
		why = "(" + f.ReadIntentList + " does not ask for the primary first: read intent lands there only when no node listed before it can take a session, a standby down, lagging or refusing sessions)"
	}
	return &Verdict{Code: VReadIntent, Message: fmt.Sprintf("%d of %d read-intent %s %s: the run measured the primary, not the standbys its intent asked for %s",
		off, f.ReadIntentSessions, unit, where, why)}
}
