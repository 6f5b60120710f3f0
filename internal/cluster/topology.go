// Package cluster owns a local "availability group": one PostgreSQL primary and N hot
// standbys on loopback, made and run by agbench (create, start, stop, status, failover,
// destroy), and the topology file that every other command reads to find them. Under
// Patroni (create --ha patroni: patroni*.go) it starts and stops etcd and a Patroni per node
// and reads Patroni's REST API; Patroni, not agbench, then decides failovers.
//
// It owns every process of a cluster: the nodes, and the processes beside them (etcd,
// Patroni, the background agbench that serves the listener or the links: background.go, and
// each node's node_exporter when the nodes are in network namespaces of their own:
// netns.go), started, supervised and stopped here, each stopped by the one helper
// (process.go: a signal, a deadline, then SIGKILL). The command layer only asks for them.
// It must not import workloads, the runner, the listener, the links or the report: the
// listener and the links run as agbench processes of their own, never inside it.
//
// The records it writes into the topology and its status (the listener's, the links', the
// modelled hosts', Patroni's, the status itself) are declared in internal/status, which the
// renderer reads; here they go by aliases.
//
// Imports from agbench: only internal/agerr, internal/atomicfile, internal/cgroup,
// internal/netns, internal/pgbin, internal/proc, internal/status.
package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/atomicfile"
	"github.com/agbench/agbench/internal/cgroup"
	"github.com/agbench/agbench/internal/pgbin"
	"github.com/agbench/agbench/internal/status"
)

// TopologySchema is the version of the topology file's layout.
const TopologySchema = 1

// Roles of a node (status's words for them).
const (
	RolePrimary = status.RolePrimary
	RoleStandby = status.RoleStandby
)

// Commit modes.
const (
	CommitSync  = "sync"
	CommitAsync = "async"
)

// Topology is the cluster's description, kept as topology.json in its folder.
// It never holds a password: that lives in the pgpass file it names.
type Topology struct {
	Schema    int               `json:"schema"`
	Name      string            `json:"name"`
	Dir       string            `json:"dir"`
	Created   time.Time         `json:"created"`
	Commit    string            `json:"commit"`
	PG        pgbin.Install     `json:"postgres"`
	OSUser    pgbin.OSUser      `json:"os_user"`
	Superuser string            `json:"superuser"`
	Database  string            `json:"database"`
	PassFile  string            `json:"passfile"`
	Settings  map[string]string `json:"settings,omitempty"`
	// Hosts is the host model when each node runs in a control group of its own; absent,
	// the nodes share the machine's CPUs, memory and page cache.
	Hosts *HostModel `json:"hosts,omitempty"`
	// Links are the links with latency in front of the nodes, when asked for.
	Links *LinksInfo `json:"links,omitempty"`
	// Netns is set when each node is in a network namespace of its own (create --netns).
	Netns *NetnsInfo `json:"netns,omitempty"`
	Nodes []Node     `json:"nodes"`
	// RoutingList is the cluster's read-only routing list (SQL Server's syntax), when one was
	// given at create: its listener and routing comparisons use it instead of the default.
	RoutingList string `json:"routing_list,omitempty"`
	// Listener is the agbench listener started with the cluster, if any.
	Listener *ListenerInfo `json:"listener,omitempty"`
	// Patroni is set when Patroni runs the nodes (create --ha patroni): it, not agbench,
	// promotes a standby when the primary is lost.
	Patroni *PatroniInfo `json:"patroni,omitempty"`
	// Failovers lists every failover, oldest first.
	Failovers []FailoverRecord `json:"failovers,omitempty"`
	// replicationVia maps a node's name to the relay (host:port) its standbys reach it
	// through, while a drill routes replication through relays (RouteReplication); never
	// saved: a cluster started again streams directly.
	replicationVia map[string]string
}

// Node is one PostgreSQL server of the cluster. Names stay; roles change on failover.
type Node struct {
	Name    string `json:"name"`
	Role    string `json:"role"`
	Host    string `json:"host"`
	Port    int    `json:"port"`
	DataDir string `json:"data_dir"`
	LogFile string `json:"log_file"`
	// Slot is the physical replication slot this node streams from, when a standby.
	Slot string `json:"slot,omitempty"`
	// LinkPort is the port of the node's link with latency, when the cluster has links.
	LinkPort int `json:"link_port,omitempty"`
	// Group is the node's control group when the cluster models hosts.
	Group *cgroup.Group `json:"group,omitempty"`
	// Under Patroni: the node's REST API port, its Patroni's configuration, log and pid.
	RESTPort      int    `json:"rest_port,omitempty"`
	PatroniConfig string `json:"patroni_config,omitempty"`
	PatroniLog    string `json:"patroni_log,omitempty"`
	PatroniPID    int    `json:"patroni_pid,omitempty"`
	// HostMetrics is the URL of the Prometheus node_exporter on the node's host (its
	// /metrics), when its host figures are read from one rather than from this machine.
	HostMetrics string `json:"host_metrics,omitempty"`
	// Netns is the node's network namespace when it is a host of its own (create --netns);
	// Host is then its address there.
	Netns *NodeNetns `json:"netns,omitempty"`
	// Exporter is the node_exporter agbench runs in the node's namespace (HostMetrics is
	// its URL).
	Exporter *Exporter `json:"exporter,omitempty"`
	// LinkHost is where the node's link listens when it is not Host: the root namespace's
	// address on the cluster's subnet when the node is in a namespace of its own.
	LinkHost string `json:"link_host,omitempty"`
}

// ListenerInfo records a listener started alongside the cluster (status.ListenerInfo).
type ListenerInfo = status.ListenerInfo

// FailoverRecord is one failover in the topology's history.
type FailoverRecord struct {
	At          time.Time `json:"at"`
	From        string    `json:"from"`
	To          string    `json:"to"`
	Planned     bool      `json:"planned"`
	WriteOutage float64   `json:"write_outage_seconds"`
	Total       float64   `json:"total_seconds"`
}

// Primary returns the node whose role is primary, or nil.
func (t *Topology) Primary() *Node {
	for i := range t.Nodes {
		if t.Nodes[i].Role == RolePrimary {
			return &t.Nodes[i]
		}
	}
	return nil
}

// Standbys returns the nodes whose role is standby, in topology order.
func (t *Topology) Standbys() []*Node {
	var s []*Node
	for i := range t.Nodes {
		if t.Nodes[i].Role == RoleStandby {
			s = append(s, &t.Nodes[i])
		}
	}
	return s
}

// Node returns the node of that name, or nil.
func (t *Topology) Node(name string) *Node {
	for i := range t.Nodes {
		if t.Nodes[i].Name == name {
			return &t.Nodes[i]
		}
	}
	return nil
}

// NodeNames lists the names of all nodes, in topology order.
func (t *Topology) NodeNames() []string {
	names := make([]string, len(t.Nodes))
	for i, n := range t.Nodes {
		names[i] = n.Name
	}
	return names
}

// ConnString returns a libpq keyword/value connection string for a node and database
// ("" means the cluster's database). The password comes from the passfile it names.
// Through links, when the cluster has them, the node is reached on its link.
func (t *Topology) ConnString(n *Node, db string) string {
	return t.connString(n.ClientHost(), n.ClientPort(), db)
}

// directConnString reaches the node on its own port, never through a link: agbench's own
// administration (create, status, failover) does not pay the modelled latency.
func (t *Topology) directConnString(n *Node, db string) string {
	return t.connString(n.Host, n.Port, db)
}

func (t *Topology) connString(host string, port int, db string) string {
	if db == "" {
		db = t.Database
	}
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s passfile=%s sslmode=disable application_name=agbench",
		host, port, t.Superuser, db, quoteConnValue(t.PassFile))
}

// URL returns the node as a postgres:// URL (no password; passfile as a parameter).
func (t *Topology) URL(n *Node, db string) string {
	if db == "" {
		db = t.Database
	}
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable&passfile=%s", t.Superuser, n.ClientHost(), n.ClientPort(), db, t.PassFile)
}

func quoteConnValue(s string) string {
	if s != "" && !strings.ContainsAny(s, ` '\`) {
		return s
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// Home returns agbench's home folder: $AGBENCH_HOME, else ~/.local/share/agbench, except
// for root, whose home PostgreSQL's unprivileged user cannot enter: /var/lib/agbench.
func Home(getenv func(string) string) string {
	if h := getenv("AGBENCH_HOME"); h != "" {
		return h
	}
	if os.Geteuid() == 0 {
		return "/var/lib/agbench"
	}
	if x := getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "agbench")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".local", "share", "agbench")
}

// ClusterDir is the folder of the named cluster under home.
func ClusterDir(home, name string) string { return filepath.Join(home, "clusters", name) }

func topologyPath(dir string) string { return filepath.Join(dir, "topology.json") }

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,30}$`)

// CheckName validates a cluster name.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return agerr.BadInputf("--name %q: a cluster name is 1-31 lowercase letters, digits, '-' or '_', starting with a letter", name)
	}
	return nil
}

// ErrNoCluster is returned (wrapped as bad input) when a named cluster does not exist.
var ErrNoCluster = errors.New("no such cluster")

// Load reads the topology of the named cluster under home.
func Load(home, name string) (*Topology, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	return LoadFile(topologyPath(ClusterDir(home, name)))
}

// LoadFile reads a topology file.
func LoadFile(path string) (*Topology, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, agerr.BadInputf("cluster %s: %w (no %s); see agbench cluster list", filepath.Base(filepath.Dir(path)), ErrNoCluster, path)
	}
	if err != nil {
		return nil, err
	}
	var t Topology
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, agerr.BadInputf("%s: not a topology file: %v", path, err)
	}
	if t.Schema != TopologySchema {
		return nil, agerr.BadInputf("%s: topology schema %d, this agbench reads %d", path, t.Schema, TopologySchema)
	}
	if t.Primary() == nil {
		return nil, fmt.Errorf("%s: no node has the primary role", path)
	}
	return &t, nil
}

// Save writes the topology atomically (a temporary file renamed over the old one).
func (t *Topology) Save() error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(topologyPath(t.Dir), append(b, '\n'), 0o644)
}

// List returns the names of the clusters under home, sorted.
func List(home string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(home, "clusters"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if _, err := os.Stat(topologyPath(filepath.Join(home, "clusters", e.Name()))); err == nil {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// Env is what `cluster env` exports to reach a node (the primary when node is ""): libpq's
// PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSFILE and PGSSLMODE, in that order. The password
// stays in the passfile.
func (t *Topology) Env(node string) ([][2]string, error) {
	n := t.Primary()
	if node != "" {
		if n = t.Node(node); n == nil {
			return nil, agerr.BadInputf("--node %s: no such node in cluster %s (nodes: %s)", node, t.Name, strings.Join(t.NodeNames(), ", "))
		}
	}
	return [][2]string{{"PGHOST", n.Host}, {"PGPORT", strconv.Itoa(n.Port)}, {"PGUSER", t.Superuser},
		{"PGDATABASE", t.Database}, {"PGPASSFILE", t.PassFile}, {"PGSSLMODE", "disable"}}, nil
}

// Summaries lists the clusters under home as `cluster list` shows them: each one's
// topology, and how many of its nodes run; one whose topology cannot be read says why.
func Summaries(home string) ([]status.Summary, error) {
	names, err := List(home)
	if err != nil {
		return nil, err
	}
	var out []status.Summary
	for _, n := range names {
		topo, err := Load(home, n)
		if err != nil {
			out = append(out, status.Summary{Name: n, Error: err.Error()})
			continue
		}
		s := status.Summary{Name: topo.Name, Version: topo.PG.Version, Commit: topo.Commit, Nodes: len(topo.Nodes)}
		if p := topo.Primary(); p != nil {
			s.Primary, s.Host, s.Port = p.Name, p.Host, p.Port
		}
		for _, r := range topo.Running() {
			if r {
				s.Running++
			}
		}
		out = append(out, s)
	}
	return out, nil
}
