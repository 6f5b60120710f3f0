// Package target owns where a workload's sessions go: resolving --cluster NAME or the
// connection strings --primary, --standby and --listener into connection strings per
// intent (read-only or read-write), connecting, and finding out where a session actually
// landed (the node's cluster_name or address, and pg_is_in_recovery()). It also reads the
// server's version and the settings that matter for a result file.
//
// It imports the cluster package (topology files), routing (intent spellings), result and
// agerr; it must not import the runner, workloads, the listener or the report.
//
// Imports from agbench: only internal/agerr, internal/cluster, internal/result, internal/routing.
package target

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/routing"
)

// Intent is what a session declares it will do.
type Intent string

// Intents, as ApplicationIntent=ReadOnly / ReadWrite in SQL Server.
const (
	ReadWrite Intent = "read-write"
	ReadOnly  Intent = "read-only"
)

// ConnectTimeout bounds connecting to a server.
const ConnectTimeout = 10 * time.Second

// ParseIntent parses --intent, in the spellings the listener takes (routing.ParseIntent):
// read-only, readonly, read_only, ro, ReadOnly; read-write, readwrite, read_write, rw.
func ParseIntent(s string) (Intent, error) {
	i, err := routing.ParseIntent(s)
	if err != nil {
		return "", agerr.BadInputf("--intent %q: want read-only (readonly, ro) or read-write (readwrite, rw)", s)
	}
	if i == routing.ReadOnly {
		return ReadOnly, nil
	}
	return ReadWrite, nil
}

// Spec is what the command line said about the target.
type Spec struct {
	// Cluster is an agbench cluster's name (--cluster).
	Cluster string
	// Primary, Standbys and Listener are connection strings (libpq keyword/value or URL).
	Primary  string
	Standbys []string
	Listener string
	// Database replaces the database of every connection string, a cluster's or given ("" keeps it).
	Database string
}

// Target is a resolved set of servers.
type Target struct {
	// Topo is the cluster's topology when --cluster was used.
	Topo     *cluster.Topology
	Primary  string
	Standbys []string
	Listener string
	// PrimaryName and StandbyNames name the servers in results and tables: the cluster's
	// node names, the NAME of NAME=URL, else primary, standby1, standby2 ...
	PrimaryName  string
	StandbyNames []string
}

// NameOfPrimary is the primary's name in results ("primary" when none was given).
func (t *Target) NameOfPrimary() string {
	if t.PrimaryName == "" {
		return "primary"
	}
	return t.PrimaryName
}

// NameOfStandby is the i-th standby's name in results ("standby1" ... when none was given).
func (t *Target) NameOfStandby(i int) string {
	if i < len(t.StandbyNames) && t.StandbyNames[i] != "" {
		return t.StandbyNames[i]
	}
	return fmt.Sprintf("standby%d", i+1)
}

// NameOfAddr is the name of the server at host:port among the target's servers, so that a
// session's landing is named as the topology names it; "" when none is there.
func (t *Target) NameOfAddr(addr string) string {
	if t.Topo != nil {
		for _, n := range t.Topo.Nodes {
			if fmt.Sprintf("%s:%d", n.Host, n.Port) == addr {
				return n.Name
			}
		}
		return ""
	}
	if t.Primary != "" && addrOf(t.Primary) == addr {
		return t.NameOfPrimary()
	}
	for i, cs := range t.Standbys {
		if addrOf(cs) == addr {
			return t.NameOfStandby(i)
		}
	}
	return ""
}

// nameRE is the NAME of a NAME=URL connection string.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,63}$`)

// IsNodeName says whether s can name a node in NAME=URL (and in a listener's NODE=LIST).
func IsNodeName(s string) bool { return nameRE.MatchString(s) }

// SplitName reads [NAME=]URL: a name, '=', then a postgres:// or postgresql:// URL. Anything
// else (a URL alone, a keyword/value string such as "host=a port=5432") has no name.
func SplitName(s string) (name, conn string) {
	if n, rest, ok := strings.Cut(s, "="); ok && nameRE.MatchString(n) &&
		(strings.HasPrefix(rest, "postgres://") || strings.HasPrefix(rest, "postgresql://")) {
		return n, rest
	}
	return "", s
}

// WithDatabase returns the connection string cs with its database set to db ("" keeps it).
func WithDatabase(cs, db string) string {
	if db == "" {
		return cs
	}
	if strings.Contains(cs, "://") {
		if u, err := url.Parse(cs); err == nil {
			u.Path = "/" + db
			return u.String()
		}
	}
	// In a keyword/value string the last value of a keyword wins.
	return cs + " dbname='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(db) + "'"
}

// CheckSpec checks a Spec as Resolve does, without loading the cluster (which a plan may
// not have made yet): flags that conflict, connection strings that do not parse, a cluster
// name that cannot be one.
func CheckSpec(s Spec) error {
	_, err := resolve(s)
	return err
}

// Resolve checks a Spec and turns it into connection strings; home is agbench's home (for
// --cluster). Every problem is reported at once, naming its flag. Connection strings may be
// NAME=URL; --database replaces their database as it does a cluster's.
func Resolve(home string, s Spec) (*Target, error) {
	t, err := resolve(s)
	if err != nil || s.Cluster == "" {
		return t, err
	}
	topo, err := cluster.Load(home, s.Cluster)
	if err != nil {
		return nil, err
	}
	t.Topo = topo
	t.Primary = topo.ConnString(topo.Primary(), s.Database)
	t.PrimaryName = topo.Primary().Name
	t.Standbys, t.StandbyNames = nil, nil
	for _, n := range topo.Standbys() {
		t.Standbys = append(t.Standbys, topo.ConnString(n, s.Database))
		t.StandbyNames = append(t.StandbyNames, n.Name)
	}
	return t, nil
}

// resolve checks s and resolves its connection strings (not its cluster).
func resolve(s Spec) (*Target, error) {
	var errs []error
	if s.Cluster != "" && (s.Primary != "" || len(s.Standbys) > 0) {
		errs = append(errs, agerr.BadInputf("--cluster and --primary/--standby: give one or the other"))
	}
	if s.Cluster == "" && s.Primary == "" && s.Listener == "" {
		errs = append(errs, agerr.BadInputf("no target: give --cluster NAME, or --primary (and --standby, --listener) connection strings"))
	}
	t := &Target{PrimaryName: "primary"}
	parse := func(flag, given, defName string) (string, string) {
		name, cs := SplitName(given)
		if name == "" {
			name = defName
		}
		cs = WithDatabase(cs, s.Database)
		if _, err := pgx.ParseConfig(cs); err != nil {
			errs = append(errs, agerr.BadInputf("%s %q: %v", flag, result.Redact(given), err))
		}
		return name, cs
	}
	if s.Primary != "" {
		t.PrimaryName, t.Primary = parse("--primary", s.Primary, "primary")
	}
	if s.Listener != "" {
		_, t.Listener = parse("--listener", s.Listener, "listener")
	}
	for i, given := range s.Standbys {
		name, cs := parse("--standby", given, fmt.Sprintf("standby%d", i+1))
		t.StandbyNames = append(t.StandbyNames, name)
		t.Standbys = append(t.Standbys, cs)
	}
	if s.Cluster != "" && cluster.CheckName(s.Cluster) != nil {
		errs = append(errs, agerr.BadInputf("--cluster %q: not a cluster name (1-31 lowercase letters, digits, '-' or '_', starting with a letter)", s.Cluster))
	}
	if err := agerr.Join(errs...); err != nil {
		return nil, err
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
		return cs + sep + routing.IntentParam + "=" + string(ReadOnly)
	}
	return cs + " " + routing.IntentParam + "=" + string(ReadOnly)
}

// WithMinLSN adds the WAL position a session must see to a connection string for a
// listener (a server without one takes it as an unused custom setting).
func WithMinLSN(cs, lsn string) string {
	if strings.Contains(cs, "://") {
		sep := "?"
		if strings.Contains(cs, "?") {
			sep = "&"
		}
		return cs + sep + routing.MinLSNParam + "=" + url.QueryEscape(lsn)
	}
	return cs + " " + routing.MinLSNParam + "=" + lsn
}

// Summary describes the target for a result file.
func (t *Target) Summary() *result.Topology {
	s := &result.Topology{}
	if t.Topo != nil {
		s.Cluster, s.Commit = t.Topo.Name, t.Topo.Commit
		s.RoutingList = t.Topo.RoutingList
		if l := t.Topo.Links; l != nil {
			s.Links, s.LinkLatencySeconds, s.LinkBandwidth = l.String(), time.Duration(l.Latency).Seconds(), l.Bandwidth
		}
		if h := t.Topo.Hosts; h != nil {
			s.Hosts = h.String()
		}
		if h := t.Topo.Hosts; h.Enforced() {
			s.HostCPUs, s.HostMemoryBytes, s.HostCPUShares = h.CPUs, h.Memory, h.CPUShares
			if h.HasIO() {
				s.HostIO = &result.HostIO{ReadBPS: h.ReadBPS, WriteBPS: h.WriteBPS, ReadIOPS: h.ReadIOPS, WriteIOPS: h.WriteIOPS}
				if h.IODevice != nil {
					s.HostIODevice = h.IODevice.Name + " " + h.IODevice.String()
				}
			}
		}
		for _, n := range t.Topo.Nodes {
			s.Nodes = append(s.Nodes, result.Node{Name: n.Name, Role: n.Role, Addr: fmt.Sprintf("%s:%d", n.Host, n.Port)})
		}
		return s
	}
	if t.Primary != "" {
		s.Nodes = append(s.Nodes, result.Node{Name: t.NameOfPrimary(), Role: cluster.RolePrimary, Addr: addrOf(t.Primary)})
	}
	for i, cs := range t.Standbys {
		s.Nodes = append(s.Nodes, result.Node{Name: t.NameOfStandby(i), Role: cluster.RoleStandby, Addr: addrOf(cs)})
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
