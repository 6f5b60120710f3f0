package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cgroup"
	"github.com/agbench/agbench/internal/netns"
	"github.com/agbench/agbench/internal/proc"
	"github.com/agbench/agbench/internal/status"
)

// A cluster under Patroni (`cluster create --ha patroni`): every node's PostgreSQL is run by a
// Patroni of its own, which elects the primary through a one-member etcd and promotes a
// standby by itself when the primary is lost. agbench starts and stops these processes (in
// the foreground of their own sessions, logs in the cluster's folder; no systemd: process.go
// starts and stops them) and reads
// Patroni's REST API; it never decides a failover itself in this mode.

// HAPatroni is the high-availability mode in which Patroni runs the nodes.
const HAPatroni = "patroni"

// Patroni's timing defaults, in seconds: Patroni wants ttl ≥ loop_wait + 2 × retry_timeout.
const (
	DefaultPatroniTTL          = 10
	DefaultPatroniLoopWait     = 2
	DefaultPatroniRetryTimeout = 4
)

// Ports above the base port: node i's REST API on base+restPortOffset+i, etcd's client and
// peer ports on base+etcdPortOffset and the next.
const (
	restPortOffset = 30
	etcdPortOffset = 40
	// PatroniPortSpan is how many ports from the base port a cluster under Patroni takes.
	PatroniPortSpan = etcdPortOffset + 2
)

// Bounds of Patroni's waits.
const (
	patroniLeaderTimeout = 120 * time.Second
	patroniStopTimeout   = 90 * time.Second
	etcdReadyTimeout     = 60 * time.Second
	etcdStopGrace        = 5 * time.Second
)

// Patroni's and etcd's records (status.PatroniInfo).
type (
	PatroniInfo = status.PatroniInfo
	EtcdInfo    = status.EtcdInfo
)

// RESTURL is the node's Patroni REST API ("" when the cluster is not under Patroni).
func (n *Node) RESTURL() string {
	if n.RESTPort == 0 {
		return ""
	}
	return "http://" + n.Host + ":" + strconv.Itoa(n.RESTPort)
}

// RESTURLs lists the nodes' Patroni REST APIs, in topology order (none without Patroni).
func (t *Topology) RESTURLs() []string {
	var out []string
	for i := range t.Nodes {
		if u := t.Nodes[i].RESTURL(); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// checkPatroni validates the Patroni choices of a create and finds the binaries.
func (o *CreateOptions) checkPatroni() (*PatroniInfo, error) {
	if o.HA == "" {
		return nil, nil
	}
	var errs []error
	if o.HA != HAPatroni {
		return nil, agerr.BadInputf("--ha %q: want patroni", o.HA)
	}
	if o.Standbys < 1 {
		errs = append(errs, agerr.BadInputf("--ha patroni needs at least one standby (--standbys)"))
	}
	if o.Host != (cgroup.Budget{}) {
		errs = append(errs, agerr.BadInputf("--ha patroni with --host-*: not supported (Patroni starts the postmasters, outside the nodes' control groups)"))
	}
	if o.LinkLatency > 0 || o.LinkBandwidth > 0 {
		errs = append(errs, agerr.BadInputf("--ha patroni with --link-latency/--link-bandwidth: not supported yet"))
	}
	ttl, loop, retry := o.PatroniTTL, o.PatroniLoopWait, o.PatroniRetryTimeout
	if ttl == 0 && loop == 0 && retry == 0 {
		ttl, loop, retry = DefaultPatroniTTL, DefaultPatroniLoopWait, DefaultPatroniRetryTimeout
	}
	if loop < 1 || retry < 1 || ttl < loop+2*retry {
		errs = append(errs, agerr.BadInputf("--patroni-ttl %d, --patroni-loop-wait %d, --patroni-retry-timeout %d: want each at least 1 and ttl ≥ loop_wait + 2 × retry_timeout (Patroni's rule), e.g. 10/2/4", ttl, loop, retry))
	}
	info := &PatroniInfo{Scope: "agbench-" + o.Name,
		PatroniTiming: status.PatroniTiming{TTL: ttl, LoopWait: loop, RetryTimeout: retry, SynchronousMode: o.Commit == CommitSync}}
	var err error
	if info.Binary, err = exec.LookPath("patroni"); err != nil {
		errs = append(errs, agerr.BadInputf("--ha patroni: patroni is not installed (apt-get install patroni, or scripts/install-deps.sh)"))
	}
	if info.Etcd.Binary, err = exec.LookPath("etcd"); err != nil {
		errs = append(errs, agerr.BadInputf("--ha patroni: etcd is not installed (apt-get install etcd-server, or scripts/install-deps.sh)"))
	}
	return info, agerr.Join(errs...)
}

// patroniPorts gives the nodes their REST ports and etcd its ports, and checks them free.
func (t *Topology) patroniPorts(base int) error {
	var errs []error
	for i := range t.Nodes {
		n := &t.Nodes[i]
		n.RESTPort = base + restPortOffset + i
		if t.Netns == nil { // else on the node's own address, in its new namespace
			errs = append(errs, checkPortFree(n.Host, n.RESTPort))
		}
	}
	e := &t.Patroni.Etcd
	e.ClientPort, e.PeerPort = base+etcdPortOffset, base+etcdPortOffset+1
	if t.Netns == nil { // else on this machine's new address on the cluster's subnet
		errs = append(errs, checkPortFree("127.0.0.1", e.ClientPort), checkPortFree("127.0.0.1", e.PeerPort))
	}
	return agerr.Join(errs...)
}

// buildPatroni makes the cluster under Patroni: etcd first, then the primary's Patroni,
// which runs initdb (Patroni's bootstrap), then each standby's, which clones from the
// leader, and waits until every standby streams (and, in synchronous mode, until Patroni
// has named a synchronous standby).
func (t *Topology) buildPatroni(ctx context.Context, password string, w interface{ Write([]byte) (int, error) }) error {
	pd := filepath.Join(t.Dir, "patroni")
	e := &t.Patroni.Etcd
	e.DataDir, e.LogFile = filepath.Join(t.Dir, "etcd"), filepath.Join(t.Dir, "logs", "etcd.log")
	if t.Netns != nil {
		e.Host = t.Netns.Gateway // where the Patronis in the nodes' namespaces reach it
	}
	for _, d := range []string{pd, e.DataDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
	}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		n.PatroniConfig = filepath.Join(pd, n.Name+".yml")
		n.PatroniLog = filepath.Join(t.Dir, "logs", n.Name+"-patroni.log")
		if err := t.writePatroniConfig(n, password); err != nil {
			return err
		}
	}
	// Patroni cannot make a data folder in a folder PostgreSQL's user may not write.
	if err := t.user().Own(t.Dir); err != nil {
		return err
	}
	progress(w, "etcd on %s:%d (%s)", e.Addr(), e.ClientPort, e.Binary)
	if err := t.startEtcd(ctx); err != nil {
		return err
	}
	p := t.Primary()
	progress(w, "patroni %s: bootstrap (initdb) on %s:%d, REST %s", p.Name, p.Host, p.Port, p.RESTURL())
	if err := t.startPatroni(p); err != nil {
		return err
	}
	if err := t.Save(); err != nil {
		return err
	}
	if err := t.waitPatroniLeader(ctx, p.Name, patroniLeaderTimeout); err != nil {
		return err
	}
	for _, s := range t.Standbys() {
		progress(w, "patroni %s: clone from %s, REST %s", s.Name, p.Name, s.RESTURL())
		if err := t.startPatroni(s); err != nil {
			return err
		}
	}
	if err := t.Save(); err != nil {
		return err
	}
	if err := t.waitPatroniWhole(ctx, PatroniWholeTimeout); err != nil {
		return err
	}
	return t.Save()
}

// writePatroniConfig writes the node's Patroni configuration (YAML, mode 0600: it holds the
// password), with Patroni's etcd3 section (etcd's v3 API; the v2 one needs --enable-v2).
func (t *Topology) writePatroniConfig(n *Node, password string) error {
	shared := map[string]string{
		"wal_level": "replica", "max_wal_senders": "16", "max_replication_slots": "16", "hot_standby": "on",
		"hot_standby_feedback": "on", "wal_log_hints": "on", "password_encryption": "scram-sha-256",
		"log_line_prefix": "%m [%p] %q%u@%d ",
	}
	for k, v := range t.Settings {
		shared[k] = v
	}
	local := map[string]string{
		"unix_socket_directories": "", "cluster_name": n.Name,
		"logging_collector": "on", "log_directory": filepath.Dir(n.LogFile), "log_filename": filepath.Base(n.LogFile),
		"log_file_mode": "0640",
	}
	auth := map[string]string{"username": t.Superuser, "password": password}
	hba := []string{
		"host all all 127.0.0.1/32 scram-sha-256", "host replication all 127.0.0.1/32 scram-sha-256",
		"host all all ::1/128 scram-sha-256", "host replication all ::1/128 scram-sha-256",
	}
	if t.Netns != nil {
		hba = append(hba, "host all all "+t.Netns.Subnet+" scram-sha-256", "host replication all "+t.Netns.Subnet+" scram-sha-256")
	}
	rest := fmt.Sprintf("%s:%d", n.Host, n.RESTPort)
	addr := fmt.Sprintf("%s:%d", n.Host, n.Port)
	cfg := map[string]any{
		"scope":   t.Patroni.Scope,
		"name":    n.Name,
		"log":     map[string]any{"level": "INFO"},
		"restapi": map[string]any{"listen": rest, "connect_address": rest},
		"etcd3":   map[string]any{"hosts": []string{net.JoinHostPort(t.Patroni.Etcd.Addr(), strconv.Itoa(t.Patroni.Etcd.ClientPort))}},
		"bootstrap": map[string]any{
			"dcs": map[string]any{
				"ttl": t.Patroni.TTL, "loop_wait": t.Patroni.LoopWait, "retry_timeout": t.Patroni.RetryTimeout,
				"maximum_lag_on_failover": 1 << 20, "synchronous_mode": t.Patroni.SynchronousMode,
				"postgresql": map[string]any{"use_pg_rewind": true, "use_slots": true, "parameters": shared},
			},
			"initdb": []any{map[string]string{"encoding": "UTF8"}, map[string]string{"locale": "C"}, map[string]string{"auth": "scram-sha-256"}},
		},
		"postgresql": map[string]any{
			"listen": addr, "connect_address": addr,
			"data_dir": n.DataDir, "bin_dir": t.PG.BinDir,
			"pgpass":         filepath.Join(t.Dir, "patroni", n.Name+".pgpass"),
			"authentication": map[string]any{"superuser": auth, "replication": auth},
			"parameters":     local,
			"pg_hba":         hba,
		},
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	return os.WriteFile(n.PatroniConfig, b, 0o600)
}

// daemon starts a program as the cluster's OS user (startDaemon: in a session of its own,
// its output appended to logFile) in the cluster's folder, inside the network namespace ns
// unless ns is "".
func (t *Topology) daemon(ns, logFile, path string, args ...string) (*daemon, error) {
	cmd := t.user().Command(context.Background(), path, args...)
	cmd.Dir = t.Dir
	if ns != "" {
		netns.Enter(cmd, ns)
	}
	d, err := startDaemon(cmd, logFile, 0o640)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	return d, nil
}

// startEtcd starts the cluster's etcd unless it runs, and waits until it answers.
func (t *Topology) startEtcd(ctx context.Context) error {
	e := &t.Patroni.Etcd
	if e.PID > 0 && t.ownProcess(e.PID, e.DataDir) == nil {
		return nil
	}
	if err := checkPortFree(e.Addr(), e.ClientPort); err != nil {
		return err
	}
	peer := "http://" + net.JoinHostPort(e.Addr(), strconv.Itoa(e.PeerPort))
	client := "http://" + net.JoinHostPort(e.Addr(), strconv.Itoa(e.ClientPort))
	d, err := t.daemon("", e.LogFile, e.Binary, "--name", "agbench", "--data-dir", e.DataDir,
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "agbench="+peer, "--initial-cluster-token", t.Patroni.Scope, "--initial-cluster-state", "new")
	if err != nil {
		return err
	}
	e.PID = d.pid
	deadline := time.Now().Add(etcdReadyTimeout)
	for {
		var h struct {
			Health string `json:"health"`
		}
		if err := getJSON(ctx, client+"/health", &h); err == nil && h.Health == "true" {
			return nil
		}
		if !Alive(d.pid) || time.Now().After(deadline) {
			return fmt.Errorf("etcd did not become healthy on %s%s", client, logTail(e.LogFile))
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// startPatroni starts the node's Patroni unless it runs.
func (t *Topology) startPatroni(n *Node) error {
	if n.PatroniPID > 0 && t.ownProcess(n.PatroniPID, n.PatroniConfig) == nil {
		return nil
	}
	ns := ""
	if n.Netns != nil { // Patroni, and the PostgreSQL it starts, in the node's namespace
		ns = n.Netns.Namespace
	} else if err := checkPortFree(n.Host, n.RESTPort); err != nil {
		return err
	}
	d, err := t.daemon(ns, n.PatroniLog, t.Patroni.Binary, n.PatroniConfig)
	if err != nil {
		return err
	}
	n.PatroniPID = d.pid
	return nil
}

// StartPatroni starts the named node's Patroni (after a kill, as its service manager would)
// and records its pid.
func (t *Topology) StartPatroni(name string) error {
	n := t.Node(name)
	if n == nil || t.Patroni == nil {
		return fmt.Errorf("no node %q under Patroni in cluster %s", name, t.Name)
	}
	if err := t.startPatroni(n); err != nil {
		return err
	}
	return t.Save()
}

// ownProcess checks that pid is alive and that its command line names arg (the node's
// Patroni configuration, etcd's data folder): a process this cluster started.
func (t *Topology) ownProcess(pid int, arg string) error {
	if pid <= 0 || !Alive(pid) {
		return fmt.Errorf("process %d is not running", pid)
	}
	args, err := proc.Cmdline(proc.Root, pid)
	if err != nil {
		return fmt.Errorf("process %d: %v", pid, err)
	}
	if slices.Contains(args, arg) {
		return nil
	}
	return fmt.Errorf("process %d is not this cluster's (its command line does not name %s)", pid, arg)
}

// OwnPatroni returns the pid of the named node's Patroni after checking that it is the one
// this cluster started (alive, its command line naming the node's configuration).
func (t *Topology) OwnPatroni(name string) (int, error) {
	n := t.Node(name)
	if n == nil || t.Patroni == nil {
		return 0, fmt.Errorf("no node %q under Patroni in cluster %s", name, t.Name)
	}
	if n.PatroniPID == 0 {
		return 0, fmt.Errorf("node %s: its Patroni is not running", name)
	}
	if err := t.ownProcess(n.PatroniPID, n.PatroniConfig); err != nil {
		return 0, fmt.Errorf("node %s's Patroni: %w", name, err)
	}
	return n.PatroniPID, nil
}

// KillPatroni kills the named node's Patroni with SIGKILL (after OwnPatroni's checks) and
// waits until it is gone. Its PostgreSQL goes on running: Patroni does not take it along.
func (t *Topology) KillPatroni(name string) error {
	pid, err := t.OwnPatroni(name)
	if err != nil {
		return err
	}
	if _, err := stopProcess(pid, syscall.SIGKILL, crashWait); err != nil {
		return fmt.Errorf("kill patroni %d of %s: %w", pid, name, err)
	}
	t.Node(name).PatroniPID = 0
	return t.Save()
}

// stopPatroni asks the node's Patroni to stop (SIGTERM: it stops its PostgreSQL too) and
// waits for it; a Patroni that does not stop in time is killed.
func (t *Topology) stopPatroni(n *Node) error {
	if n.PatroniPID == 0 || t.ownProcess(n.PatroniPID, n.PatroniConfig) != nil {
		n.PatroniPID = 0
		return nil
	}
	killed, err := stopProcess(n.PatroniPID, syscall.SIGTERM, patroniStopTimeout)
	if err != nil {
		return fmt.Errorf("patroni of %s: %w", n.Name, err)
	}
	n.PatroniPID = 0
	if killed {
		return fmt.Errorf("patroni of %s did not stop within %v: killed", n.Name, patroniStopTimeout)
	}
	return nil
}

// stopPatroniAll stops every node's Patroni, the standbys first so that none of them takes
// the leader's place while it stops, then etcd.
func (t *Topology) stopPatroniAll() error {
	if t.Patroni == nil {
		return nil
	}
	var errs []error
	for _, s := range t.Standbys() {
		errs = append(errs, t.stopPatroni(s))
	}
	errs = append(errs, t.stopPatroni(t.Primary()))
	e := &t.Patroni.Etcd
	if e.PID > 0 && t.ownProcess(e.PID, e.DataDir) == nil {
		if _, err := stopProcess(e.PID, syscall.SIGTERM, etcdStopGrace); err != nil {
			return errors.Join(append(errs, fmt.Errorf("etcd: %w", err))...)
		}
	}
	e.PID = 0
	return errors.Join(errs...)
}

// startPatroniAll starts etcd and every node's Patroni (the last primary first), then waits
// until Patroni has a leader and every standby streams from it.
func (t *Topology) startPatroniAll(ctx context.Context) error {
	if err := t.startEtcd(ctx); err != nil {
		return err
	}
	if err := t.startPatroni(t.Primary()); err != nil {
		return err
	}
	for _, s := range t.Standbys() {
		if err := t.startPatroni(s); err != nil {
			return err
		}
	}
	if err := t.Save(); err != nil {
		return err
	}
	return t.waitPatroniWhole(ctx, PatroniWholeTimeout)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
