package cluster

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cgroup"
	"github.com/agbench/agbench/internal/pgbin"
)

// Limits of a local cluster.
const (
	MaxStandbys      = 9
	DefaultBasePort  = 6500
	DefaultSuperuser = "postgres"
	DefaultDatabase  = "postgres"
	// streamingTimeout bounds how long create waits for a new standby to stream.
	streamingTimeout = 60 * time.Second
)

// CreateOptions are the choices of `agbench cluster create`.
type CreateOptions struct {
	Home     string
	Name     string
	Standbys int
	Commit   string // CommitSync or CommitAsync
	BasePort int
	PGBin    string // "" finds one
	OSUser   string // "" chooses (root: postgres)
	Settings []string
	// Host models each node as a host of its own (a control group with a CPU quota in cores
	// and a CPU weight, a memory limit in bytes, page cache included, and IO limits on the
	// disk that holds the data); zero is no budget. CPUShares may be cgroup.AutoCPUShares.
	Host cgroup.Budget
	// RoutingList is recorded in the topology (checked by the caller).
	RoutingList string
	// LinkLatency puts a link with this latency per round trip in front of every node
	// (clients and replication reach the nodes through it), served by a background agbench
	// (Agbench) that Create starts once the primary runs, before any standby streams.
	LinkLatency time.Duration
	// LinkBandwidth holds each direction of each connection through a link to this many
	// bytes per second (it too puts links in front of the nodes).
	LinkBandwidth int64
	// Listener, when set, is a listener that a background agbench (Agbench) serves for the
	// cluster, started once every node runs.
	Listener *ListenerInfo
	// Agbench is the agbench binary that serves the links and the listener (Self.Binary);
	// needed with either.
	Agbench string
	// HA is "" (agbench fails over when told) or HAPatroni (Patroni runs the nodes and
	// fails over by itself), with Patroni's timing in seconds.
	HA                                               string
	PatroniTTL, PatroniLoopWait, PatroniRetryTimeout int
	// Netns puts each node in a network namespace of its own, with its own address and its
	// own node_exporter (netns.go); it needs root.
	Netns bool
	// Progress, when set, receives one line per step.
	Progress io.Writer
}

var settingKeyRE = regexp.MustCompile(`^[a-z_][a-z0-9_.]*$`)

// reservedSettings are set by agbench itself and may not be overridden with --set.
var reservedSettings = map[string]bool{
	"port": true, "listen_addresses": true, "cluster_name": true, "primary_conninfo": true,
	"primary_slot_name": true, "synchronous_standby_names": true, "unix_socket_directories": true,
}

// ParseSettings reads key=value pairs (--set) and reports every bad one at once.
func ParseSettings(pairs []string) (map[string]string, error) {
	out := map[string]string{}
	var errs []error
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		k = strings.TrimSpace(k)
		switch {
		case !ok:
			errs = append(errs, agerr.BadInputf("--set %q: want key=value", p))
		case !settingKeyRE.MatchString(k):
			errs = append(errs, agerr.BadInputf("--set %q: %q is not a setting name", p, k))
		case reservedSettings[k]:
			errs = append(errs, agerr.BadInputf("--set %s: agbench sets %s itself", p, k))
		default:
			out[k] = v
		}
	}
	return out, agerr.Join(errs...)
}

// validate checks the options without touching anything, reporting every problem at once.
func (o *CreateOptions) validate() (map[string]string, error) {
	var errs []error
	if err := CheckName(o.Name); err != nil {
		errs = append(errs, err)
	}
	if o.Standbys < 0 || o.Standbys > MaxStandbys {
		errs = append(errs, agerr.BadInputf("--standbys %d: want 0 to %d", o.Standbys, MaxStandbys))
	}
	if o.Commit != CommitSync && o.Commit != CommitAsync {
		errs = append(errs, agerr.BadInputf("--commit %q: want sync or async", o.Commit))
	}
	if o.Commit == CommitSync && o.Standbys == 0 {
		errs = append(errs, agerr.BadInputf("--commit sync needs at least one standby (--standbys)"))
	}
	if o.BasePort < 1024 || o.BasePort+o.Standbys > 65535 {
		errs = append(errs, agerr.BadInputf("--base-port %d: want 1024 to %d", o.BasePort, 65535-o.Standbys))
	}
	if o.Host.CPUs < 0 || math.IsNaN(o.Host.CPUs) || math.IsInf(o.Host.CPUs, 0) {
		errs = append(errs, agerr.BadInputf("--host-cpus %g: want a number of cores above 0", o.Host.CPUs))
	}
	if o.Host.Memory < 0 {
		errs = append(errs, agerr.BadInputf("--host-memory: want a size above 0"))
	}
	settings, err := ParseSettings(o.Settings)
	errs = append(errs, err)
	if o.HA != "" {
		_, err := o.checkPatroni()
		errs = append(errs, err)
	}
	errs = append(errs, o.checkNetns())
	return settings, agerr.Join(errs...)
}

// Create makes a new cluster: initdb for the primary, configured for replication, then one
// pg_basebackup per standby, each with its own slot, then waits until every standby streams.
// A create that fails or is interrupted stops what it started and removes what it made.
func Create(ctx context.Context, o CreateOptions) (*Topology, error) {
	settings, err := o.validate()
	if err != nil {
		return nil, err
	}
	hosts, err := o.checkHosts(settings)
	if err != nil {
		return nil, err
	}
	t, err := o.newTopology(ctx, settings, hosts)
	if err != nil {
		return nil, err
	}
	if err := t.placeNodes(o.Standbys, o.BasePort); err != nil {
		return nil, err
	}
	if err := t.makeDir(); err != nil {
		return nil, err
	}
	self := Self{Binary: o.Agbench, Home: o.Home}
	if err := t.build(ctx, hosts, self, o.Progress); err != nil {
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 60*time.Second)
		defer cancel()
		t.removeAll(cleanup)
		return nil, err
	}
	if o.Listener != nil {
		// A listener that does not start leaves the cluster made: it is whole without it.
		t.Listener = o.Listener
		if err := t.StartListener(ctx, self); err != nil {
			return nil, fmt.Errorf("cluster %s created, but its listener did not start: %w", t.Name, err)
		}
	}
	return t, nil
}

// newTopology describes the cluster o makes, before anything is made: its servers' install
// and OS user, its folder (which must not exist yet), links, Patroni, host model and
// namespaces.
func (o *CreateOptions) newTopology(ctx context.Context, settings map[string]string, hosts *cgroup.System) (*Topology, error) {
	in, err := pgbin.Find(ctx, o.PGBin)
	if err != nil {
		return nil, err
	}
	u, err := pgbin.ResolveOSUser(o.OSUser)
	if err != nil {
		return nil, err
	}
	dir := ClusterDir(o.Home, o.Name)
	if _, err := os.Stat(dir); err == nil {
		return nil, agerr.BadInputf("cluster %s already exists (%s): destroy it first or choose another --name", o.Name, dir)
	}
	if err := u.CheckReach(dir); err != nil {
		return nil, err
	}
	t := &Topology{
		Schema: TopologySchema, Name: o.Name, Dir: dir, Created: time.Now().UTC(), Commit: o.Commit,
		PG: *in, OSUser: *u, Superuser: DefaultSuperuser, Database: DefaultDatabase,
		PassFile: filepath.Join(dir, "pgpass"), Settings: settings, RoutingList: o.RoutingList,
	}
	if o.LinkLatency > 0 || o.LinkBandwidth > 0 {
		t.Links = &LinksInfo{Latency: Duration(o.LinkLatency), Bandwidth: o.LinkBandwidth}
	}
	if (t.Links != nil || o.Listener != nil) && o.Agbench == "" {
		return nil, errors.New("cluster create: links and a listener need the agbench binary to serve them (Agbench)")
	}
	if t.Patroni, err = o.checkPatroni(); err != nil {
		return nil, err
	}
	if hosts != nil {
		t.Hosts = &HostModel{Kind: fmt.Sprintf("cgroup v%d", hosts.Version), Budget: o.Host, MachineCPUs: len(hosts.CPUs)}
	}
	if o.Netns {
		// Found by name from now on: the namespaces a create of this cluster killed before
		// its folder was removed by hand go first, and destroy finds the ones made below.
		t.Netns = &NetnsInfo{}
		if err := t.removeNetns(); err != nil {
			return nil, fmt.Errorf("remove what an earlier cluster %s left: %w", t.Name, err)
		}
	}
	return t, nil
}

// makeDir makes the cluster's folder; a cluster in namespaces saves its topology at once,
// so that destroy finds it should create be killed.
func (t *Topology) makeDir() error {
	if err := os.MkdirAll(filepath.Dir(t.Dir), 0o755); err != nil {
		return fmt.Errorf("make %s: %w", filepath.Dir(t.Dir), err)
	}
	if err := os.Mkdir(t.Dir, 0o700); err != nil {
		if errors.Is(err, os.ErrExist) {
			return agerr.BadInputf("cluster %s already exists (%s)", t.Name, t.Dir)
		}
		return err
	}
	if t.Netns != nil {
		if err := t.Save(); err != nil {
			os.RemoveAll(t.Dir)
			return err
		}
	}
	return nil
}

// placeNodes lays out the nodes of a new cluster in its folder and on their ports from
// base (links' and Patroni's too), and checks every port free.
func (t *Topology) placeNodes(standbys, base int) error {
	var portErrs []error
	for i, name := range CreatedNodeNames(standbys) {
		n := Node{Name: name, Role: RoleStandby, Host: "127.0.0.1", Port: base + i,
			DataDir: filepath.Join(t.Dir, "nodes", name), LogFile: filepath.Join(t.Dir, "logs", name+".log"), Slot: name}
		if i == 0 {
			n.Role, n.Slot = RolePrimary, ""
		}
		// A node of its own namespace listens in a new one, on an address of its own, where
		// nothing else listens (its link too: on the root namespace's new address).
		if t.Netns == nil {
			portErrs = append(portErrs, checkPortFree(n.Host, n.Port))
		}
		if t.Links != nil {
			n.LinkPort = base + linkPortOffset + i
			if t.Netns == nil {
				portErrs = append(portErrs, checkPortFree(n.Host, n.LinkPort))
			}
		}
		t.Nodes = append(t.Nodes, n)
	}
	if t.Patroni != nil {
		portErrs = append(portErrs, t.patroniPorts(base))
	}
	return agerr.Join(portErrs...)
}

// CreatedNodeNames are the names Create gives the nodes of a cluster with n standbys:
// primary, standby1, standby2 ...
func CreatedNodeNames(standbys int) []string {
	names := []string{"primary"}
	for i := 1; i <= standbys; i++ {
		names = append(names, fmt.Sprintf("standby%d", i))
	}
	return names
}

func progress(w io.Writer, format string, a ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", a...)
	}
}

func (t *Topology) build(ctx context.Context, hosts *cgroup.System, self Self, w io.Writer) error {
	if hosts != nil {
		if err := t.ioDevice(); err != nil {
			return err
		}
		progress(w, "control groups: %s", t.Hosts)
		if err := t.makeGroups(hosts); err != nil {
			return err
		}
	}
	if t.Netns != nil {
		if err := t.makeNetns(w); err != nil {
			return err
		}
	}
	for _, d := range []string{filepath.Join(t.Dir, "nodes"), filepath.Join(t.Dir, "logs")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
	}
	password, err := newPassword()
	if err != nil {
		return err
	}
	if err := t.writePassFile(password); err != nil {
		return err
	}
	if t.Patroni != nil {
		if err := t.buildPatroni(ctx, password, w); err != nil {
			return err
		}
		return t.startOwnExporters(ctx, w)
	}
	if err := t.initPrimary(ctx, password, w); err != nil {
		return err
	}
	if t.Links != nil {
		progress(w, "links: %s", t.Links)
		if err := t.StartLinks(ctx, self); err != nil {
			return fmt.Errorf("start the links: %w", err)
		}
	}
	if err := t.cloneStandbys(ctx, w); err != nil {
		return err
	}
	return t.startOwnExporters(ctx, w)
}

// startOwnExporters starts the exporter of each node in a namespace of its own, once the
// nodes run, and saves the topology.
func (t *Topology) startOwnExporters(ctx context.Context, w io.Writer) error {
	if t.Netns != nil {
		progress(w, "node_exporter on each node's address, port %d", ExporterPort)
		if err := t.StartExporters(ctx); err != nil {
			return err
		}
	}
	return t.Save()
}

// initPrimary makes the primary with initdb (the superuser's password from a file that
// lives only as long as initdb runs), configures and starts it, and saves the topology.
func (t *Topology) initPrimary(ctx context.Context, password string, w io.Writer) error {
	pwfile := filepath.Join(t.Dir, ".initdb-pw")
	if err := os.WriteFile(pwfile, []byte(password+"\n"), 0o600); err != nil {
		return err
	}
	defer os.Remove(pwfile)
	if err := t.user().Own(t.Dir); err != nil {
		return err
	}
	p := t.Primary()
	progress(w, "initdb %s (PostgreSQL %s, %s)", p.Name, t.PG.Version, t.PG.BinDir)
	if _, err := t.install().Run(ctx, t.user(), "initdb", "-D", p.DataDir, "-U", t.Superuser, "--pwfile", pwfile,
		"--auth", "scram-sha-256", "-E", "UTF8", "--locale", "C"); err != nil {
		return err
	}
	if err := t.writeHBA(p); err != nil {
		return err
	}
	if err := t.writeConf(p); err != nil {
		return err
	}
	progress(w, "start %s on %s:%d", p.Name, p.Host, p.Port)
	if err := t.startNode(ctx, p); err != nil {
		return err
	}
	return t.Save()
}

// cloneStandbys makes each standby with pg_basebackup from the primary through its own
// slot, starts it, and waits until every one streams.
func (t *Topology) cloneStandbys(ctx context.Context, w io.Writer) error {
	p := t.Primary()
	for _, s := range t.Standbys() {
		if err := t.createSlot(ctx, p, s.Slot); err != nil {
			return err
		}
		progress(w, "pg_basebackup %s from %s (slot %s)", s.Name, p.Name, s.Slot)
		if err := t.baseBackup(ctx, p, s); err != nil {
			return err
		}
		if err := t.writeConf(s); err != nil {
			return err
		}
		progress(w, "start %s on %s:%d", s.Name, s.Host, s.Port)
		if err := t.startNode(ctx, s); err != nil {
			return err
		}
	}
	for _, s := range t.Standbys() {
		if err := t.waitStreaming(ctx, s.Name, streamingTimeout); err != nil {
			return err
		}
	}
	return nil
}

func newPassword() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// writePassFile keeps the generated password where libpq finds it, readable only by its owner.
func (t *Topology) writePassFile(password string) error {
	var b strings.Builder
	for _, host := range append([]string{"127.0.0.1", "localhost", "::1"}, t.netnsPassHosts()...) {
		fmt.Fprintf(&b, "%s:*:*:%s:%s\n", strings.ReplaceAll(host, ":", `\:`), t.Superuser, password)
	}
	return os.WriteFile(t.PassFile, []byte(b.String()), 0o600)
}

// writeHBA allows password (SCRAM) connections from loopback only, replication included.
func (t *Topology) writeHBA(n *Node) error {
	hba := `# Written by agbench: SCRAM from loopback only.
# TYPE  DATABASE     USER  ADDRESS       METHOD
host    all          all   127.0.0.1/32  scram-sha-256
host    replication  all   127.0.0.1/32  scram-sha-256
host    all          all   ::1/128       scram-sha-256
host    replication  all   ::1/128       scram-sha-256
` + t.netnsHBA()
	return os.WriteFile(filepath.Join(n.DataDir, "pg_hba.conf"), []byte(hba), 0o600)
}

func (t *Topology) createSlot(ctx context.Context, on *Node, slot string) error {
	c, err := t.Connect(ctx, on)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	_, err = c.Exec(ctx, `SELECT pg_create_physical_replication_slot($1, true)
		WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)`, slot)
	if err != nil {
		return fmt.Errorf("create slot %s on %s: %w", slot, on.Name, err)
	}
	return nil
}

func (t *Topology) dropSlot(ctx context.Context, on *Node, slot string) error {
	c, err := t.Connect(ctx, on)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	_, err = c.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active`, slot)
	return err
}

func (t *Topology) baseBackup(ctx context.Context, from, to *Node) error {
	cmd := t.user().Command(ctx, t.PG.Path("pg_basebackup"), "-h", from.Host, "-p", fmt.Sprint(from.Port),
		"-U", t.Superuser, "-D", to.DataDir, "-X", "stream", "-c", "fast", "-S", to.Slot, "--no-password")
	cmd.Env = append(cmd.Env, "PGPASSFILE="+t.PassFile)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("pg_basebackup for %s: %v: %s", to.Name, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// waitStreaming waits until the primary's pg_stat_replication shows the standby streaming
// and, when the primary's synchronous_standby_names names it, counted as a synchronous
// candidate (its sync_state is no longer "async"), so that a commit made right after waits
// for it as promised.
func (t *Topology) waitStreaming(ctx context.Context, standby string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		state, err := t.replicationState(ctx, standby)
		if err == nil && state == "streaming" {
			return nil
		}
		if time.Now().After(deadline) {
			n := t.Node(standby)
			return fmt.Errorf("%s does not stream from %s after %v (state %q, %v)%s", standby, t.Primary().Name, timeout, state, err, logTail(n.LogFile))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// replicationState returns the standby's state in the primary's pg_stat_replication, or
// "streaming, not yet synchronous" while a standby that synchronous_standby_names lists is
// still reported async.
func (t *Topology) replicationState(ctx context.Context, standby string) (string, error) {
	c, err := t.Connect(ctx, t.Primary())
	if err != nil {
		return "", err
	}
	defer c.Close(context.WithoutCancel(ctx))
	var state, syncState string
	var listed bool
	err = c.QueryRow(ctx, `SELECT state, sync_state,
		current_setting('synchronous_standby_names') LIKE '%"' || $1 || '"%'
		FROM pg_stat_replication WHERE application_name = $1`, standby).Scan(&state, &syncState, &listed)
	if err == nil && state == "streaming" && listed && syncState == "async" {
		state = "streaming, not yet synchronous"
	}
	return state, err
}
