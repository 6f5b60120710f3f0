package drill

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/target"
)

// Endpoints are the servers of a cluster agbench did not make, as connection strings: the
// drill only connects to them (`--fault observe`), never signals or starts anything.
type Endpoints struct {
	// Nodes are the servers, the one given as primary first. All must take the same login
	// and database (one cluster).
	Nodes []Endpoint
	// Listener, when set, is where the writers connect (a connection string).
	Listener string
	// Patroni, when set, are Patroni REST API URLs: the drill asks the leader's for a
	// switchover each cycle instead of waiting for the user's failover.
	Patroni []string
}

// Endpoint is one server: a name (given, or its host:port) and its connection string.
type Endpoint struct {
	Name, Conn string
	addr, user string
}

// NewEndpoints checks the connection strings (flag names the flags for messages) and returns
// the endpoints; every problem is reported at once, as bad input.
func NewEndpoints(primary string, standbys []string, listenerURL string, patroni []string) (*Endpoints, error) {
	e := &Endpoints{Listener: listenerURL, Patroni: patroni}
	var errs []error
	var user, db string
	add := func(flag, name, conn string) {
		cfg, err := pgconn.ParseConfig(conn)
		if err != nil {
			errs = append(errs, agerr.BadInputf("%s: %v", flag, err))
			return
		}
		if strings.HasPrefix(cfg.Host, "/") {
			errs = append(errs, agerr.BadInputf("%s: host %s is a Unix socket; the drill needs TCP addresses", flag, cfg.Host))
			return
		}
		addr := net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
		if name == "" {
			name = addr
		}
		if user == "" {
			user, db = cfg.User, cfg.Database
		} else if cfg.User != user || cfg.Database != db {
			errs = append(errs, agerr.BadInputf("%s: user %s, database %s; the first node has user %s, database %s (one cluster, one login)", flag, cfg.User, cfg.Database, user, db))
		}
		e.Nodes = append(e.Nodes, Endpoint{Name: name, Conn: conn, addr: addr, user: cfg.User})
	}
	if primary == "" {
		errs = append(errs, agerr.BadInputf("--primary: required with --standby (the node that is primary now)"))
	} else {
		name, conn := splitName(primary)
		add("--primary", name, conn)
	}
	for _, s := range standbys {
		name, conn := splitName(s)
		add("--standby "+s, name, conn)
	}
	if len(standbys) == 0 {
		errs = append(errs, agerr.BadInputf("--standby: at least one (a drill needs a node to fail over to)"))
	}
	if listenerURL != "" {
		if _, err := pgconn.ParseConfig(listenerURL); err != nil {
			errs = append(errs, agerr.BadInputf("--listener: %v", err))
		}
	}
	if len(patroni) > 0 && len(patroni) != len(e.Nodes) {
		errs = append(errs, agerr.BadInputf("--patroni: %d URL(s) for %d node(s) (--primary and each --standby, in that order)", len(patroni), len(e.Nodes)))
	}
	seen := map[string]bool{}
	for _, n := range e.Nodes {
		if seen[n.Name] {
			errs = append(errs, agerr.BadInputf("node %s given twice", n.Name))
		}
		seen[n.Name] = true
	}
	return e, agerr.Join(errs...)
}

// Check connects to every node before anything is made, as every command checks its
// targets: a login or database a server refuses is bad input naming the node, its server and
// the login; the node given as --primary must accept writes and each --standby be in
// recovery (pg_is_in_recovery()), else bad input naming the node. A node that cannot be
// reached now is no error here: the drill's start says how many nodes accept writes.
func (e *Endpoints) Check(ctx context.Context) error {
	var errs []error
	for i := range e.Nodes {
		errs = append(errs, e.Nodes[i].checkRole(ctx, i > 0))
	}
	return agerr.Join(errs...)
}

// checkRole connects to n and compares pg_is_in_recovery() with its flag.
func (n *Endpoint) checkRole(ctx context.Context, wantStandby bool) error {
	flag := "--primary"
	if wantStandby {
		flag = "--standby"
	}
	label := fmt.Sprintf("%s %s (server %s, login %s)", flag, n.Name, n.addr, n.user)
	c, err := target.Connect(ctx, n.Conn, "agbench-drill")
	if err != nil {
		return target.CheckLogin(ctx, label, n.Conn)
	}
	defer c.Close(context.WithoutCancel(ctx))
	var rec bool
	if err := c.QueryRow(ctx, `SELECT pg_is_in_recovery()`).Scan(&rec); err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	switch {
	case rec && !wantStandby:
		return agerr.BadInputf("%s: in recovery (pg_is_in_recovery() is true): a standby, not the primary; give the node that accepts writes now as --primary", label)
	case !rec && wantStandby:
		return agerr.BadInputf("%s: accepts writes (pg_is_in_recovery() is false): a primary, not a standby; a drill starts from the one primary, given as --primary", label)
	}
	return nil
}

// splitName splits NAME=URL; anything else is a connection string without a name.
func splitName(s string) (string, string) {
	if n, rest, ok := strings.Cut(s, "="); ok && !strings.ContainsAny(n, " '\"") && strings.Contains(rest, "://") {
		return n, rest
	}
	return "", s
}

// EndpointsOf are a cluster's nodes as endpoints (its REST APIs too, under Patroni).
func EndpointsOf(t *cluster.Topology) *Endpoints {
	e := &Endpoints{Patroni: t.RESTURLs()}
	nodes := append([]*cluster.Node{t.Primary()}, t.Standbys()...)
	for _, n := range nodes {
		e.Nodes = append(e.Nodes, Endpoint{Name: n.Name, Conn: t.ConnString(n, ""), addr: n.ClientAddr()})
	}
	if len(e.Patroni) > 0 {
		e.Patroni = nil
		for _, n := range nodes {
			e.Patroni = append(e.Patroni, n.RESTURL())
		}
	}
	return e
}

// node returns the endpoint of that name.
func (e *Endpoints) node(name string) *Endpoint {
	for i := range e.Nodes {
		if e.Nodes[i].Name == name {
			return &e.Nodes[i]
		}
	}
	return nil
}

// multiHost is the first node's connection string reaching every node, in order, with
// target_session_attrs attrs: a URL's host list, or host= and port= lists after the
// keywords (the last of a keyword wins).
func (e *Endpoints) multiHost(attrs string) string {
	var hosts, ports, pairs []string
	for _, n := range e.Nodes {
		h, p, _ := net.SplitHostPort(n.addr)
		hosts, ports, pairs = append(hosts, h), append(ports, p), append(pairs, n.addr)
	}
	extra := map[string]string{"target_session_attrs": attrs, "connect_timeout": strconv.Itoa(int(connectTimeout.Seconds())),
		"application_name": "agbench-drill"}
	first := e.Nodes[0].Conn
	if strings.Contains(first, "://") {
		if u, err := url.Parse(first); err == nil {
			u.Host = strings.Join(pairs, ",")
			q := u.Query()
			for k, v := range extra {
				q.Set(k, v)
			}
			u.RawQuery = q.Encode()
			return u.String()
		}
	}
	s := first + fmt.Sprintf(" host=%s port=%s", strings.Join(hosts, ","), strings.Join(ports, ","))
	for _, k := range []string{"target_session_attrs", "connect_timeout", "application_name"} {
		s += " " + k + "=" + extra[k]
	}
	return s
}
