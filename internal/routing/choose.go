package routing

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Intent is what a session declared at login (SQL Server's ApplicationIntent).
type Intent uint8

// Intents.
const (
	ReadWrite Intent = iota // the default: the session goes to the primary
	ReadOnly                // the session may go to a standby named by the routing list
)

func (i Intent) String() string {
	if i == ReadOnly {
		return "read-only"
	}
	return "read-write"
}

// ParseIntent reads an intent as clients write it: read-only, readonly, read_only, ro
// (and ReadOnly as SQL Server spells it), or read-write, readwrite, read_write, rw.
func ParseIntent(s string) (Intent, error) {
	switch strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(strings.TrimSpace(s))) {
	case "readonly", "ro":
		return ReadOnly, nil
	case "readwrite", "rw":
		return ReadWrite, nil
	}
	return ReadWrite, fmt.Errorf("intent %q: want read-only or read-write", s)
}

// Role is a node's role as last probed.
type Role uint8

// Roles.
const (
	RoleUnknown Role = iota
	RolePrimary
	RoleStandby
	// RoleStalePrimary is a writable node that is not taken for the primary: another
	// writable node is newer (a split brain). It takes no session.
	RoleStalePrimary
)

func (r Role) String() string {
	switch r {
	case RolePrimary:
		return "primary"
	case RoleStandby:
		return "standby"
	case RoleStalePrimary:
		return "stale-primary"
	}
	return "unknown"
}

// Node is what the router knows of one node when it chooses.
type Node struct {
	Name string
	// Up is true when the last health probe succeeded.
	Up bool
	// Role is the role the last probe saw. At most one node that is Up should be the
	// primary; the caller settles a split brain before calling Choose.
	Role Role
	// Lag is how far the standby's replay is behind the primary, when LagUnknown is empty.
	Lag time.Duration
	// LagUnknown, when set, says why the standby's lag was not measured (no position of
	// the primary known yet, for example); Lag is then only a lower bound, 0 when none is
	// known. Such a standby never passes a MaxLag limit as if it were caught up.
	LagUnknown string
	// Why says what is wrong when Up is false (the probe's error), for messages.
	Why string
	// Refusing, when set, says why the node takes no new session although its last probe
	// was good: it refused a session during startup since then (shutting down, too many
	// connections, connection refused). The node keeps its role, so the primary's
	// routing list still applies while the primary refuses.
	Refusing string
	// Skip, when set, says why the node may not take the one session being chosen for
	// (a standby behind the LSN that session must see); the caller sets it on its own
	// copy of the nodes. It never keeps the primary from a session.
	Skip string
}

// Policy is how sessions are routed.
type Policy struct {
	// Lists holds the routing list of each primary, keyed by the primary's node name, as
	// SQL Server keeps a READ_ONLY_ROUTING_LIST per replica for when it is primary; the
	// key "" holds the list used by any primary without its own. When neither applies,
	// the list is every standby as one load-balanced set, then the primary.
	Lists map[string]List
	// MaxLag skips standbys whose replay lag is larger, or unknown; 0 means no limit.
	MaxLag time.Duration
	// Off sends read intent to the primary, as an availability group without a routing
	// list does, so that runs can compare routing off and on.
	Off bool
}

// Decision is where a session goes.
type Decision struct {
	Node string
	// Primary is true when Node is the primary.
	Primary bool
	// List is the routing list that decided (canonical form); empty for read-write
	// sessions and with routing off.
	List string
}

// NoTargetError says that no node may take the session. Error names the list and why
// each node was skipped.
type NoTargetError struct {
	Intent  Intent
	List    string
	Skipped []string // "name: why", in list order
}

func (e *NoTargetError) Error() string {
	if e.Intent == ReadWrite || e.List == "" {
		return fmt.Sprintf("no primary is available for a %s session (%s)", e.Intent, strings.Join(e.Skipped, "; "))
	}
	return fmt.Sprintf("no node of routing list %s is available for a read-only session (%s)", e.List, strings.Join(e.Skipped, "; "))
}

// Router chooses targets. Its only state is the round-robin position of each
// load-balanced set; it is safe for concurrent use.
type Router struct {
	policy Policy
	mu     sync.Mutex
	next   map[string]int // "list key/entry index" -> next member to try
}

// NewRouter returns a router for the policy.
func NewRouter(p Policy) *Router {
	return &Router{policy: p, next: map[string]int{}}
}

// Policy returns the router's policy.
func (r *Router) Policy() Policy { return r.policy }

// ListFor returns the routing list that applies while primary is the primary, and its key
// in Policy.Lists ("" when it is the default list, "*" when it is the built-in one).
func (r *Router) ListFor(primary string, nodes []Node) (List, string) {
	if l, ok := r.policy.Lists[primary]; ok && primary != "" {
		return l, primary
	}
	if l, ok := r.policy.Lists[""]; ok {
		return l, ""
	}
	var set []string
	for _, n := range nodes {
		if n.Name != primary {
			set = append(set, n.Name)
		}
	}
	l := List{}
	if len(set) > 0 {
		l.Entries = append(l.Entries, set)
	}
	if primary != "" {
		l.Entries = append(l.Entries, []string{primary})
	}
	return l, "*"
}

// Choose picks the node for a session of the given intent from the nodes' current state.
func (r *Router) Choose(intent Intent, nodes []Node) (Decision, error) {
	primary := ""
	for _, n := range nodes {
		if n.Up && n.Role == RolePrimary {
			primary = n.Name
			break
		}
	}
	if intent == ReadWrite || r.policy.Off {
		if primary == "" {
			return Decision{}, &NoTargetError{Intent: intent, Skipped: whyNoPrimary(nodes)}
		}
		for _, n := range nodes {
			if n.Name == primary && n.Refusing != "" {
				return Decision{}, &NoTargetError{Intent: intent, Skipped: []string{primary + ": refused a session since its last probe (" + n.Refusing + ")"}}
			}
		}
		return Decision{Node: primary, Primary: true}, nil
	}
	list, key := r.ListFor(primary, nodes)
	byName := make(map[string]*Node, len(nodes))
	for i := range nodes {
		byName[nodes[i].Name] = &nodes[i]
	}
	var skipped []string
	r.mu.Lock()
	defer r.mu.Unlock()
	for ei, entry := range list.Entries {
		k := fmt.Sprintf("%s/%d", key, ei)
		start := r.next[k] % len(entry)
		for j := range entry {
			i := (start + j) % len(entry)
			name := entry[i]
			if why := r.unusable(byName[name], primary); why != "" {
				skipped = append(skipped, name+": "+why)
				continue
			}
			r.next[k] = i + 1
			return Decision{Node: name, Primary: name == primary, List: list.String()}, nil
		}
	}
	if primary != "" && !list.Contains(primary) {
		skipped = append(skipped, primary+": primary, not listed")
	}
	return Decision{}, &NoTargetError{Intent: ReadOnly, List: list.String(), Skipped: skipped}
}

// unusable says why a node may not take a read-only session, or "" when it may.
func (r *Router) unusable(n *Node, primary string) string {
	switch {
	case n == nil:
		return "not a known node"
	case !n.Up:
		if n.Why != "" {
			return "down (" + n.Why + ")"
		}
		return "down"
	case n.Refusing != "":
		return "refused a session since its last probe (" + n.Refusing + ")"
	case n.Name == primary:
		return ""
	case n.Skip != "":
		return n.Skip
	case n.Role != RoleStandby:
		return "not a standby (" + n.Role.String() + ")"
	case r.policy.MaxLag > 0 && n.LagUnknown != "":
		return fmt.Sprintf("lag unknown (%s), max %s", n.LagUnknown, r.policy.MaxLag)
	case r.policy.MaxLag > 0 && n.Lag > r.policy.MaxLag:
		return fmt.Sprintf("lag %s > max %s", n.Lag.Round(time.Millisecond), r.policy.MaxLag)
	}
	return ""
}

func whyNoPrimary(nodes []Node) []string {
	var why []string
	for _, n := range nodes {
		switch {
		case !n.Up && n.Why != "":
			why = append(why, n.Name+": down ("+n.Why+")")
		case !n.Up:
			why = append(why, n.Name+": down")
		default:
			why = append(why, n.Name+": "+n.Role.String())
		}
	}
	if len(why) == 0 {
		why = []string{"no nodes"}
	}
	return why
}
