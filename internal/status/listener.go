package status

import "time"

// ListenerInfo records a listener started alongside the cluster.
type ListenerInfo struct {
	Listen         string `json:"listen"`
	ReadOnlyListen string `json:"read_only_listen,omitempty"`
	Metrics        string `json:"metrics,omitempty"`
	RoutingList    string `json:"routing_list,omitempty"`
	PID            int    `json:"pid,omitempty"`
	LogFile        string `json:"log_file,omitempty"`
}

// ListenerNode is what a listener last learned of one backend, as its /status answers
// and its banner shows it.
type ListenerNode struct {
	Name string `json:"name"`
	Addr string `json:"addr"`
	Up   bool   `json:"up"`
	// Role is primary, standby, stale-primary (writable, but another writable node is
	// the newest primary: it takes no session), down (the last probes failed; never
	// primary), or unknown (not probed yet).
	Role string `json:"role"`
	// Timeline is the timeline a writable node writes on; absent on a standby, and when
	// the probe could not read it (TimelineError says why).
	Timeline      *uint32 `json:"timeline,omitempty"`
	TimelineError string  `json:"timeline_error,omitempty"`
	// Conflict is set while more than one node is writable: on the primary, the rule
	// that made it the newest; on a stale primary, which node is taken instead and why.
	Conflict string `json:"conflict,omitempty"`
	// Refusing says why the node takes no new session until its next good probe: it
	// refused one during startup (shutting down, too many connections, no connection).
	Refusing string `json:"refusing,omitempty"`
	// LSN is the WAL position written (primary) or replayed (standby).
	LSN string `json:"lsn,omitempty"`
	// LagSeconds is how long the standby's replay has been behind the primary: the time
	// since the primary was first seen past the standby's replay position, exact to one
	// probe interval. It is absent where it was not measured, and LagUnknown says why:
	// not a standby (the primary has no lag), down, not probed yet, no primary's WAL
	// position seen yet, or behind every position of the primary seen (then with a lower
	// bound).
	LagSeconds *float64 `json:"lag_seconds,omitempty"`
	LagUnknown string   `json:"lag_unknown,omitempty"`
	// ReplayPaused is true when pg_wal_replay_pause() is in effect.
	ReplayPaused bool      `json:"replay_paused,omitempty"`
	Error        string    `json:"error,omitempty"`
	ProbedAt     time.Time `json:"probed_at"`
}

// ListenerState is a running listener as it shows itself when it starts: the addresses it
// serves ("" for a port it does not), its routing, what read-intent sessions must see, how
// it forwards, and what it knows of each backend.
type ListenerState struct {
	Addr, ReadOnlyAddr, MetricsAddr string
	Routing                         bool
	RoutingList                     string            // "" is every standby, then the primary
	RoutingLists                    map[string]string // by the primary they apply to
	// Consistency and CausalWait are shown when ConsistencyShown: when either is not the
	// default.
	Consistency      string
	CausalWait       time.Duration
	ConsistencyShown bool
	MaxLag           time.Duration
	Forwarding       string
	Nodes            []ListenerNode
}
