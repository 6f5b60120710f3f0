package listener

import (
	"crypto/tls"
	"fmt"
	"net"
	"sort"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/routing"
)

// Defaults applied by Start to zero fields of Config.
const (
	DefaultListen         = "127.0.0.1:6432"
	DefaultProbeInterval  = time.Second
	DefaultStartupTimeout = 10 * time.Second
	DefaultDialTimeout    = 5 * time.Second
	DefaultDrainTimeout   = 5 * time.Second
	// probeFailuresDown is how many probes in a row must fail before a node counts as
	// down, so that one slow probe on a busy machine does not take a node out.
	probeFailuresDown = 2
)

// Backend is one PostgreSQL server behind the listener. Its role (primary or standby) is
// not configured: the health probes find it, and follow it through failovers.
type Backend struct {
	// Name is the node's name, as routing lists spell it.
	Name string
	// Addr is where sessions go, host:port.
	Addr string
	// ProbeConnString is how the health probe logs in (libpq keyword/value or URL, as pgx
	// reads it). It needs no privilege beyond connecting.
	ProbeConnString string
	// PatroniURL, when set, is the node's Patroni REST API: the health probe then takes the
	// node's role, WAL position and timeline from Patroni (GET /patroni) instead of asking
	// the server, so a node whose Patroni is gone is down even if its PostgreSQL still runs.
	PatroniURL string
}

// Config is a listener's configuration. Zero durations take the defaults above.
type Config struct {
	// Listen is the address of the main port ("" means DefaultListen; port 0 picks one).
	Listen string
	// ReadOnlyListen, when set, is a port on which every session has read intent.
	ReadOnlyListen string
	// Metrics, when set, is an HTTP address serving /metrics (Prometheus text format),
	// /status (JSON) and /route?intent=read-only (the redirect path, see Resolve).
	Metrics string
	// Backends are the nodes, primary and standbys in any order.
	Backends []Backend
	// RoutingList is the routing list of any primary, in SQL Server's syntax, e.g.
	// (('standby1','standby2'),'primary'). Empty means every standby as one
	// load-balanced set, then the primary.
	RoutingList string
	// RoutingLists holds routing lists of particular primaries, by node name; they win
	// over RoutingList while that node is the primary.
	RoutingLists map[string]string
	// Routing routes read intent by the routing list. False sends every session to the
	// primary, as an availability group without a routing list does.
	Routing bool
	// MaxLag skips standbys whose replay lag is larger (0: no limit).
	MaxLag time.Duration
	// Consistency is what read-intent sessions must see unless they say otherwise
	// (ConsistencyParam): Eventual (any standby the list allows) or Session (a standby that
	// has replayed all the primary had flushed when the session started).
	Consistency Consistency
	// CausalWait bounds, per session, the wait for standbys to replay what the session
	// must see (routing.MinLSNParam, Session); a standby still behind is then skipped. Zero means
	// DefaultCausalWait; otherwise it must be positive (CheckCausalWait, as --causal-wait).
	CausalWait time.Duration
	// ProbeInterval is how often each backend is probed.
	ProbeInterval time.Duration
	// TLS, when set, terminates TLS for clients that ask (SSLRequest); without it the
	// listener declines, as a server without ssl does. Backends are reached without TLS.
	TLS *tls.Config
	// RequireTLS refuses sessions that do not ask for TLS (needs TLS).
	RequireTLS bool
	// StartupTimeout bounds the client's startup phase (TLS handshake included).
	StartupTimeout time.Duration
	// DialTimeout bounds connecting to a backend.
	DialTimeout time.Duration
	// DrainTimeout is how long Close waits for sessions to end before cutting them.
	DrainTimeout time.Duration
	// Forward chooses how a session's bytes move once its startup phase is over:
	// ForwardAuto (the zero value) in the kernel when it can, else by the listener's copy
	// loops; ForwardKernel insists (Start fails without it); ForwardUser never uses it.
	Forward Forward
	// OnEvent, when set, is called (from the listener's goroutines, serially per kind of
	// work) on role changes, backends going down or coming back, refusals and sessions
	// ended because their node stopped being primary. The listener never logs.
	OnEvent func(Event)
}

// Forward is a forwarding mode (see Config.Forward).
type Forward string

// Forwarding modes.
const (
	ForwardAuto   Forward = ""
	ForwardKernel Forward = "kernel"
	ForwardUser   Forward = "user"
)

// ParseForward reads a --forward value: auto, kernel or user.
func ParseForward(s string) (Forward, error) {
	switch s {
	case "auto", "":
		return ForwardAuto, nil
	case "kernel":
		return ForwardKernel, nil
	case "user":
		return ForwardUser, nil
	}
	return "", agerr.BadInputf("--forward %q: want auto, kernel or user", s)
}

// Event is something a person running the listener may want to see.
type Event struct {
	Time time.Time
	// Kind: "up", "down", "role", "conflict" (a second writable node), "retry" (a node
	// refused a session at startup; the next candidate is tried), "refused", "ended",
	// "error".
	Kind string
	Node string
	Msg  string
}

func (e Event) String() string {
	if e.Node == "" {
		return fmt.Sprintf("%s %s: %s", e.Time.Format("15:04:05.000"), e.Kind, e.Msg)
	}
	return fmt.Sprintf("%s %s %s: %s", e.Time.Format("15:04:05.000"), e.Kind, e.Node, e.Msg)
}

// ConfigFromTopology returns the configuration of a listener in front of a local agbench
// cluster: every node as a backend (probed with the cluster's superuser and passfile), the
// addresses and routing list recorded in topo.Listener when there is one, routing on.
func ConfigFromTopology(topo *cluster.Topology) Config {
	c := Config{Routing: true}
	for i := range topo.Nodes {
		n := &topo.Nodes[i]
		c.Backends = append(c.Backends, Backend{
			Name:            n.Name,
			Addr:            n.ClientAddr(), // through its link with latency, when the cluster has one
			ProbeConnString: topo.ConnString(n, "postgres") + " application_name=agbench-listener-probe connect_timeout=5",
			PatroniURL:      n.RESTURL(), // "" unless Patroni runs the cluster
		})
	}
	if li := topo.Listener; li != nil {
		c.Listen, c.ReadOnlyListen, c.Metrics, c.RoutingList = li.Listen, li.ReadOnlyListen, li.Metrics, li.RoutingList
	}
	return c
}

// withDefaults fills zero fields.
func (c Config) withDefaults() Config {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.ProbeInterval <= 0 {
		c.ProbeInterval = DefaultProbeInterval
	}
	if c.StartupTimeout <= 0 {
		c.StartupTimeout = DefaultStartupTimeout
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.DrainTimeout <= 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
	if c.CausalWait == 0 {
		c.CausalWait = DefaultCausalWait
	}
	return c
}

// policy validates the configuration and returns the routing policy. Every problem is
// reported at once, as bad input.
func (c Config) policy() (routing.Policy, error) {
	var errs []error
	p := routing.Policy{MaxLag: c.MaxLag, Off: !c.Routing, Lists: map[string]routing.List{}}
	var names []string
	seen := map[string]bool{}
	if len(c.Backends) == 0 {
		errs = append(errs, agerr.BadInputf("listener: no backends (give a cluster or --primary and --standby)"))
	}
	for i, b := range c.Backends {
		switch {
		case b.Name == "":
			errs = append(errs, agerr.BadInputf("backend %d (%s): empty name", i+1, b.Addr))
		case seen[b.Name]:
			errs = append(errs, agerr.BadInputf("backend %q: name given twice", b.Name))
		}
		seen[b.Name] = true
		names = append(names, b.Name)
		if _, _, err := net.SplitHostPort(b.Addr); err != nil {
			errs = append(errs, agerr.BadInputf("backend %q: address %q: %v", b.Name, b.Addr, err))
		}
		if b.ProbeConnString == "" {
			errs = append(errs, agerr.BadInputf("backend %q: no connection string for the health probe", b.Name))
		}
	}
	addList := func(key, flag, s string) {
		l, err := routing.ParseFor(s, names)
		if err != nil {
			errs = append(errs, agerr.BadInputf("%s: %w", flag, err))
			return
		}
		p.Lists[key] = l
	}
	if c.RoutingList != "" {
		addList("", "--routing-list", c.RoutingList)
	}
	keys := make([]string, 0, len(c.RoutingLists))
	for k := range c.RoutingLists {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !seen[k] {
			errs = append(errs, agerr.BadInputf("--routing-list %s=...: %q is not a node", k, k))
			continue
		}
		addList(k, "--routing-list "+k, c.RoutingLists[k])
	}
	if err := CheckCausalWait(c.CausalWait); err != nil {
		errs = append(errs, err)
	}
	if c.MaxLag < 0 {
		errs = append(errs, agerr.BadInputf("--max-lag %s: must not be negative", c.MaxLag))
	}
	if c.RequireTLS && c.TLS == nil {
		errs = append(errs, agerr.BadInputf("--tls-require needs --tls-cert and --tls-key"))
	}
	for _, fa := range [][2]string{{"--listen", c.Listen}, {"--read-only-listen", c.ReadOnlyListen}, {"--metrics", c.Metrics}} {
		flag, a := fa[0], fa[1]
		if a == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(a); err != nil {
			errs = append(errs, agerr.BadInputf("%s %q: want host:port: %v", flag, a, err))
		}
	}
	return p, agerr.Join(errs...)
}

// LoadTLS reads a certificate and key (PEM files) into a server TLS configuration.
func LoadTLS(certFile, keyFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, agerr.BadInputf("--tls-cert %s --tls-key %s: %v", certFile, keyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// Validate reports every problem of the configuration at once, as bad input; Start
// validates too.
func (c Config) Validate() error {
	_, err := c.withDefaults().policy()
	return err
}
