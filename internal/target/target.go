// Package target owns where a workload's sessions go: resolving --cluster NAME or the
// connection strings --primary, --standby and --listener into connection strings per
// intent (read-only or read-write), connecting, and finding out where a session actually
// landed (the node's cluster_name or address, and pg_is_in_recovery()). It also reads the
// server's version and the settings that matter for a result file.
//
// It imports the cluster package (topology files), result and agerr; it must not import the
// runner, workloads, the listener or the report.
//
// Imports from agbench: only internal/agerr, internal/cluster, internal/result.
package target

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/result"
)

// Intent is what a session declares it will do.
type Intent string

// Intents, as ApplicationIntent=ReadOnly / ReadWrite in SQL Server.
const (
	ReadWrite Intent = "read-write"
	ReadOnly  Intent = "read-only"
)

// IntentParam is the startup parameter by which a session declares read intent to an
// agbench listener (pgx sends unknown connection-string keys as startup parameters).
const IntentParam = "agbench.intent"

// ConnectTimeout bounds connecting to a server.
const ConnectTimeout = 10 * time.Second

// ParseIntent parses --intent.
func ParseIntent(s string) (Intent, error) {
	switch Intent(s) {
	case ReadWrite, ReadOnly:
		return Intent(s), nil
	}
	return "", agerr.BadInputf("--intent %q: want read-only or read-write", s)
}

// Spec is what the command line said about the target.
type Spec struct {
	// Cluster is an agbench cluster's name (--cluster).
	Cluster string
	// Primary, Standbys and Listener are connection strings (libpq keyword/value or URL).
	Primary  string
	Standbys []string
	Listener string
	// Database overrides the database of a cluster's connection strings ("" keeps it).
	Database string
}

// Target is a resolved set of servers.
type Target struct {
	// Topo is the cluster's topology when --cluster was used.
	Topo     *cluster.Topology
	Primary  string
	Standbys []string
	Listener string
}

// Resolve checks a Spec and turns it into connection strings; home is agbench's home (for
// --cluster). Every problem is reported at once, naming its flag.
func Resolve(home string, s Spec) (*Target, error) {
	var errs []error
	if s.Cluster != "" && (s.Primary != "" || len(s.Standbys) > 0) {
		errs = append(errs, agerr.BadInputf("--cluster and --primary/--standby: give one or the other"))
	}
	if s.Cluster == "" && s.Primary == "" && s.Listener == "" {
		errs = append(errs, agerr.BadInputf("no target: give --cluster NAME, or --primary (and --standby, --listener) connection strings"))
	}
	for flag, cs := range map[string]string{"--primary": s.Primary, "--listener": s.Listener} {
		if cs != "" {
			if _, err := pgx.ParseConfig(cs); err != nil {
				errs = append(errs, agerr.BadInputf("%s %q: %v", flag, result.Redact(cs), err))
			}
		}
	}
	for _, cs := range s.Standbys {
		if _, err := pgx.ParseConfig(cs); err != nil {
			errs = append(errs, agerr.BadInputf("--standby %q: %v", result.Redact(cs), err))
		}
	}
	if err := agerr.Join(errs...); err != nil {
		return nil, err
	}
	t := &Target{Primary: s.Primary, Standbys: s.Standbys, Listener: s.Listener}
	if s.Cluster != "" {
		topo, err := cluster.Load(home, s.Cluster)
		if err != nil {
			return nil, err
		}
		t.Topo = topo
		t.Primary = topo.ConnString(topo.Primary(), s.Database)
		t.Standbys = nil
		for _, n := range topo.Standbys() {
			t.Standbys = append(t.Standbys, topo.ConnString(n, s.Database))
		}
	}
	return t, nil
}

// ConnString returns where a session of the given intent goes when it does not go through
// a listener started by the command: the listener with the read-intent parameter when there
// is one; else for read intent the standbys in turn (by vu) and the primary when there are
// none; read-write always the primary.
func (t *Target) ConnString(intent Intent, vu int) string {
	if t.Listener != "" {
		return WithIntent(t.Listener, intent)
	}
	if intent == ReadOnly && len(t.Standbys) > 0 {
		return t.Standbys[vu%len(t.Standbys)]
	}
	if t.Primary == "" {
		return t.Listener
	}
	return t.Primary
}

// WithIntent adds the read-intent startup parameter to a connection string for a listener.
func WithIntent(cs string, intent Intent) string {
	if intent != ReadOnly {
		return cs
	}
	if strings.Contains(cs, "://") {
		sep := "?"
		if strings.Contains(cs, "?") {
			sep = "&"
		}
		return cs + sep + IntentParam + "=" + string(ReadOnly)
	}
	return cs + " " + IntentParam + "=" + string(ReadOnly)
}

// Summary describes the target for a result file.
func (t *Target) Summary() *result.Topology {
	s := &result.Topology{}
	if t.Topo != nil {
		s.Cluster, s.Commit = t.Topo.Name, t.Topo.Commit
		for _, n := range t.Topo.Nodes {
			s.Nodes = append(s.Nodes, result.Node{Name: n.Name, Role: n.Role, Addr: fmt.Sprintf("%s:%d", n.Host, n.Port)})
		}
		return s
	}
	if t.Primary != "" {
		s.Nodes = append(s.Nodes, result.Node{Name: "primary", Role: cluster.RolePrimary, Addr: addrOf(t.Primary)})
	}
	for i, cs := range t.Standbys {
		s.Nodes = append(s.Nodes, result.Node{Name: fmt.Sprintf("standby%d", i+1), Role: cluster.RoleStandby, Addr: addrOf(cs)})
	}
	if t.Listener != "" {
		s.Listener = addrOf(t.Listener)
	}
	return s
}

func addrOf(cs string) string {
	c, err := pgx.ParseConfig(cs)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s:%d", c.Host, c.Port)
}

// Redirect returns a connection string like cs (user, database, passfile ...) that goes to
// host:port instead, e.g. to a listener in front of the server.
func Redirect(cs, host, port string) string {
	if strings.Contains(cs, "://") {
		if u, err := url.Parse(cs); err == nil {
			u.Host = net.JoinHostPort(host, port)
			return u.String()
		}
	}
	// In a keyword/value string the last value of a keyword wins.
	return cs + " host=" + host + " port=" + port
}
