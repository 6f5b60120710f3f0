package listener

import (
	"context"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/target"
)

// Options are a listener's settings as a person gives them (`agbench listener`'s flags,
// which the error messages name), read into a Config by Config without connecting.
type Options struct {
	// Cluster names a local agbench cluster to front; Primary ([NAME=]URL) and Standbys
	// name the nodes of any other.
	Cluster         string
	Primary         string
	Standbys        []string
	Listen          string
	ReadOnlyListen  string
	Metrics         string
	RoutingLists    []string // a list for any primary, and NODE=LIST for one primary's
	Routing         string   // on or off
	Consistency     string
	Forward         string
	TLSCert, TLSKey string
	TLSRequire      bool
	Patroni         string // REST API URLs, comma-separated, in the order of the nodes
	MaxLag          time.Duration
	ProbeInterval   time.Duration
	StartupTimeout  time.Duration
	CausalWait      time.Duration
	// Given reports whether the setting of a flag was given, not defaulted: a cluster's
	// recorded addresses and routing list hold unless the flag is given.
	Given func(flag string) bool
}

// Config reads the options into a configuration, reporting every problem at once; topo is
// the cluster that Cluster names (nil without one).
func (o Options) Config(topo *cluster.Topology) (Config, error) {
	var cfg Config
	var errs []error
	switch {
	case o.Cluster != "" && (o.Primary != "" || len(o.Standbys) > 0):
		errs = append(errs, agerr.BadInputf("--cluster and --primary/--standby: give one or the other"))
	case topo != nil:
		cfg = ConfigFromTopology(topo)
	case o.Primary != "":
		b, err := BackendFromURL("--primary", o.Primary)
		errs = append(errs, err)
		cfg.Backends = append(cfg.Backends, b)
		for _, s := range o.Standbys {
			b, err := BackendFromURL("--standby", s)
			errs = append(errs, err)
			cfg.Backends = append(cfg.Backends, b)
		}
	default:
		errs = append(errs, agerr.BadInputf("give --cluster NAME, or --primary URL (and --standby URL ...)"))
	}
	errs = append(errs, o.applyPatroni(&cfg)...)
	o.applyAddresses(&cfg)
	errs = append(errs, o.applyRoutingLists(&cfg)...)
	errs = append(errs, o.applySettings(&cfg)...)
	errs = append(errs, o.applyTLS(&cfg)...)
	if len(cfg.Backends) > 0 {
		errs = append(errs, cfg.Validate())
	}
	return cfg, agerr.Join(errs...)
}

// CheckLogins refuses, as bad input, a --primary or --standby whose login or database the
// server refused (else the listener would run with that node "down: server refused TLS
// connection"); a server down now is no error, since the listener follows nodes that come
// up later. A --cluster's logins are agbench's own.
func (o Options) CheckLogins(ctx context.Context) error {
	if o.Primary == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, loginCheckTimeout)
	defer cancel()
	_, cs := target.SplitName(o.Primary)
	errs := []error{target.CheckLogin(ctx, "--primary", cs)}
	for _, s := range o.Standbys {
		_, cs := target.SplitName(s)
		errs = append(errs, target.CheckLogin(ctx, "--standby", cs))
	}
	return agerr.Join(errs...)
}

// loginCheckTimeout bounds CheckLogins.
const loginCheckTimeout = 10 * time.Second

// applyAddresses sets the addresses given, over a cluster's recorded ones; a cluster's
// routing list gives way to any --routing-list.
func (o Options) applyAddresses(cfg *Config) {
	given := o.Given
	if given == nil {
		given = func(string) bool { return false }
	}
	if cfg.Listen == "" || given("listen") {
		cfg.Listen = o.Listen
	}
	if given("read-only-listen") {
		cfg.ReadOnlyListen = o.ReadOnlyListen
	}
	if given("metrics") {
		cfg.Metrics = o.Metrics
	}
	if given("routing-list") {
		cfg.RoutingList = ""
	}
}

// applySettings reads routing on or off, the consistency, the forwarding mode and the
// durations.
func (o Options) applySettings(cfg *Config) []error {
	var errs []error
	switch o.Routing {
	case "on":
		cfg.Routing = true
	case "off":
		cfg.Routing = false
	default:
		errs = append(errs, agerr.BadInputf("--routing %q: want on or off", o.Routing))
	}
	cfg.MaxLag, cfg.ProbeInterval, cfg.StartupTimeout, cfg.RequireTLS = o.MaxLag, o.ProbeInterval, o.StartupTimeout, o.TLSRequire
	if c, err := ParseConsistency(o.Consistency); err != nil {
		errs = append(errs, agerr.BadInputf("--consistency: %v", err))
	} else {
		cfg.Consistency = c
	}
	if err := CheckCausalWait(o.CausalWait); err != nil {
		errs = append(errs, err)
	} else {
		cfg.CausalWait = o.CausalWait
	}
	if fw, err := ParseForward(o.Forward); err != nil {
		errs = append(errs, err)
	} else {
		cfg.Forward = fw
	}
	if o.ProbeInterval <= 0 {
		errs = append(errs, agerr.BadInputf("--probe-interval %s: must be positive", o.ProbeInterval))
	}
	if o.StartupTimeout <= 0 {
		errs = append(errs, agerr.BadInputf("--startup-timeout %s: must be positive", o.StartupTimeout))
	}
	return errs
}

// applyRoutingLists sets --routing-list: one list for any primary, or NODE=LIST per primary.
func (o Options) applyRoutingLists(cfg *Config) []error {
	var errs []error
	for _, l := range o.RoutingLists {
		if node, list, ok := perPrimaryList(l); ok {
			if cfg.RoutingLists == nil {
				cfg.RoutingLists = map[string]string{}
			}
			cfg.RoutingLists[node] = list
			continue
		}
		if cfg.RoutingList != "" {
			errs = append(errs, agerr.BadInputf("--routing-list %q: a second list for any primary; use NODE=LIST for one primary's list", l))
		}
		cfg.RoutingList = l
	}
	return errs
}

// perPrimaryList splits "NODE=LIST"; a plain list starts with ( or a quote.
func perPrimaryList(s string) (node, list string, ok bool) {
	n, l, found := strings.Cut(s, "=")
	n = strings.TrimSpace(n)
	if !found || !target.IsNodeName(n) {
		return "", "", false
	}
	return n, l, true
}

// applyTLS loads --tls-cert and --tls-key and checks --tls-require against them.
func (o Options) applyTLS(cfg *Config) []error {
	var errs []error
	switch {
	case (o.TLSCert == "") != (o.TLSKey == ""):
		errs = append(errs, agerr.BadInputf("--tls-cert and --tls-key go together"))
	case o.TLSCert != "":
		tc, err := LoadTLS(o.TLSCert, o.TLSKey)
		errs = append(errs, err)
		cfg.TLS = tc
	}
	if o.TLSRequire && cfg.TLS == nil {
		cfg.RequireTLS = false // reported above or below once, not twice
		if o.TLSCert == "" && o.TLSKey == "" {
			errs = append(errs, agerr.BadInputf("--tls-require needs --tls-cert and --tls-key"))
		}
	}
	return errs
}

// applyPatroni sets --patroni: one Patroni REST API URL per backend, in the order of
// --primary and --standby. A --cluster under Patroni has them from its topology.
func (o Options) applyPatroni(cfg *Config) []error {
	if o.Patroni == "" {
		return nil
	}
	if o.Cluster != "" {
		return []error{agerr.BadInputf("--patroni with --cluster: a cluster under Patroni gives its REST APIs itself")}
	}
	urls, err := ParsePatroniURLs(o.Patroni)
	if err != nil {
		return []error{err}
	}
	if len(urls) != len(cfg.Backends) {
		return []error{agerr.BadInputf("--patroni: %d URL(s) for %d node(s) (--primary and each --standby, in that order)", len(urls), len(cfg.Backends))}
	}
	for i := range cfg.Backends {
		cfg.Backends[i].PatroniURL = urls[i]
	}
	return nil
}

// ParsePatroniURLs reads --patroni: a comma-separated list of Patroni REST API URLs (http
// or https, a host, no query), naming the first bad one.
func ParsePatroniURLs(s string) ([]string, error) {
	var out []string
	for _, raw := range strings.Split(s, ",") {
		raw = strings.TrimSpace(raw)
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, agerr.BadInputf("--patroni %q: want a Patroni REST API URL such as http://127.0.0.1:8008", raw)
		}
		out = append(out, strings.TrimRight(u.String(), "/"))
	}
	return out, nil
}

// BackendFromURL reads [NAME=]URL (or a keyword/value connection string, named by its
// host:port) into a backend; flag names the option in errors.
func BackendFromURL(flag, s string) (Backend, error) {
	name, conn := target.SplitName(s)
	cfg, err := pgconn.ParseConfig(conn)
	if err != nil {
		return Backend{}, agerr.BadInputf("%s: %v", flag, err)
	}
	if strings.HasPrefix(cfg.Host, "/") {
		return Backend{}, agerr.BadInputf("%s: host %s is a Unix socket; the listener forwards TCP only", flag, cfg.Host)
	}
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	if name == "" {
		name = addr
	}
	return Backend{Name: name, Addr: addr, ProbeConnString: conn}, nil
}
