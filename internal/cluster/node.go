package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/pgbin"
	"github.com/agbench/agbench/internal/proc"
)

// confFile is the file agbench owns in each data directory; postgresql.conf includes it.
const confFile = "agbench.conf"

// startTimeout bounds how long a server may take to start or stop.
const startTimeout = 120 * time.Second

func (t *Topology) install() *pgbin.Install { return &t.PG }
func (t *Topology) user() *pgbin.OSUser     { return &t.OSUser }

// nodeSettings are the server settings agbench writes for one node: the cluster's shared
// settings, the node's identity, and, for a standby, where it streams from.
func (t *Topology) nodeSettings(n *Node) map[string]string {
	s := map[string]string{
		"listen_addresses":         n.Host,
		"port":                     strconv.Itoa(n.Port),
		"unix_socket_directories":  "",
		"cluster_name":             n.Name,
		"wal_level":                "replica",
		"max_wal_senders":          "16",
		"max_replication_slots":    "16",
		"hot_standby":              "on",
		"hot_standby_feedback":     "on",
		"wal_log_hints":            "on", // pg_rewind needs it (or data checksums)
		"password_encryption":      "scram-sha-256",
		"logging_collector":        "off",
		"log_line_prefix":          "%m [%p] %q%u@%d ",
		"recovery_target_timeline": "latest",
	}
	if n.Role == RolePrimary {
		maps.Copy(s, t.syncSettings(n))
	}
	for k, v := range t.Settings {
		s[k] = v
	}
	if n.Role == RoleStandby {
		p := t.Primary()
		host, port := t.replicationAddr(p)
		s["primary_conninfo"] = fmt.Sprintf("host=%s port=%s user=%s passfile=%s application_name=%s sslmode=disable",
			host, port, t.Superuser, quoteConnValue(t.PassFile), n.Name)
		s["primary_slot_name"] = n.Slot
	}
	return s
}

// syncSettings are the synchronous replication settings node n has as the primary: with sync
// commit, ANY 1 of every other node; none with async commit or no other node. A standby
// about to be promoted gets them before its promotion (failover.go), so that it never
// acknowledges a commit that no synchronous standby has.
func (t *Topology) syncSettings(n *Node) map[string]string {
	if t.Commit != CommitSync {
		return nil
	}
	var others []string
	for _, o := range t.Nodes {
		if o.Name != n.Name {
			others = append(others, quoteIdent(o.Name))
		}
	}
	if len(others) == 0 {
		return nil
	}
	return map[string]string{"synchronous_standby_names": "ANY 1 (" + strings.Join(others, ", ") + ")", "synchronous_commit": "on"}
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// writeConf writes the node's agbench.conf and makes sure postgresql.conf includes it, and
// sets or removes standby.signal according to the node's role.
func (t *Topology) writeConf(n *Node) error {
	return t.writeSettings(n, t.nodeSettings(n))
}

// writeSettings writes settings as the node's agbench.conf (writeConf's work).
func (t *Topology) writeSettings(n *Node, settings map[string]string) error {
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("# Written by agbench for node " + n.Name + "; agbench rewrites it on failover.\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%s = '%s'\n", k, strings.ReplaceAll(settings[k], "'", "''"))
	}
	if err := os.WriteFile(filepath.Join(n.DataDir, confFile), []byte(b.String()), 0o600); err != nil {
		return err
	}
	main := filepath.Join(n.DataDir, "postgresql.conf")
	cur, err := os.ReadFile(main)
	if err != nil {
		return err
	}
	include := "include '" + confFile + "'"
	if !strings.Contains(string(cur), include) {
		cur = append(cur, []byte("\n"+include+"\n")...)
		if err := os.WriteFile(main, cur, 0o600); err != nil {
			return err
		}
	}
	// postgresql.auto.conf set by ALTER SYSTEM would override us; agbench keeps it empty of
	// replication settings.
	signal := filepath.Join(n.DataDir, "standby.signal")
	if n.Role == RoleStandby {
		if err := os.WriteFile(signal, nil, 0o600); err != nil {
			return err
		}
	} else if err := os.Remove(signal); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return t.user().Own(n.DataDir)
}

// startNode starts one node with pg_ctl and waits until it accepts connections.
func (t *Topology) startNode(ctx context.Context, n *Node) error {
	if t.nodeRunning(n) {
		return nil
	}
	if n.Netns == nil { // in its own namespace, only the node listens on its address
		if err := checkPortFree(n.Host, n.Port); err != nil {
			return err
		}
	}
	err := t.pgCtlStart(ctx, n, "start", "-w", "-t", strconv.Itoa(int(startTimeout.Seconds())),
		"-D", n.DataDir, "-l", n.LogFile)
	if err != nil {
		return fmt.Errorf("start %s: %w%s", n.Name, err, logTail(n.LogFile))
	}
	return nil
}

// stopNode stops one node; mode is smart, fast or immediate.
func (t *Topology) stopNode(ctx context.Context, n *Node, mode string) error {
	if !t.nodeRunning(n) {
		return nil
	}
	_, err := t.install().Run(ctx, t.user(), "pg_ctl", "stop", "-w", "-t", strconv.Itoa(int(startTimeout.Seconds())),
		"-m", mode, "-D", n.DataDir)
	if err != nil && t.nodeRunning(n) {
		return fmt.Errorf("stop %s: %w", n.Name, err)
	}
	return nil
}

// nodeRunning reports whether the node's postmaster is alive, from postmaster.pid.
func (t *Topology) nodeRunning(n *Node) bool {
	return postmasterPID(n.DataDir) > 0
}

// postmasterPID returns the pid of a live postmaster of dataDir, or 0. The pid is taken from
// postmaster.pid only when that process runs on dataDir: a lock file left by a postmaster
// that died can name a pid the system has since given to another process, which nothing
// here may stop.
func postmasterPID(dataDir string) int {
	pid := lockFilePID(dataDir)
	if pid == 0 {
		return 0
	}
	if args, err := proc.Cmdline(proc.Root, pid); err != nil || !dataDirArg(args, dataDir) {
		return 0
	}
	return pid
}

// lockFilePID returns the pid that dataDir's postmaster.pid names when that process is
// alive, whatever it runs, or 0.
func lockFilePID(dataDir string) int {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid <= 0 || !Alive(pid) {
		return 0
	}
	return pid
}

// Alive reports whether a process exists and is not a zombie (an exited postmaster that its
// new parent has not reaped yet is gone for every purpose of ours).
func Alive(pid int) bool {
	st, err := proc.ReadStat(proc.Root, pid)
	return err == nil && !st.Zombie()
}

// checkPortFree fails with bad input when something listens on host:port.
func checkPortFree(host string, port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return agerr.BadInputf("port %d on %s is in use (or not allowed): choose another --base-port", port, host)
	}
	return l.Close()
}

func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return ""
	}
	if len(b) > 1500 {
		b = b[len(b)-1500:]
	}
	return "\n--- " + path + " ---\n" + string(b)
}

// Connect opens a connection to a node as the cluster's superuser.
func (t *Topology) Connect(ctx context.Context, n *Node) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(t.directConnString(n, ""))
	if err != nil {
		return nil, err
	}
	cfg.ConnectTimeout = 5 * time.Second
	return pgx.ConnectConfig(ctx, cfg)
}

// waitReady waits until the node accepts queries.
func (t *Topology) waitReady(ctx context.Context, n *Node, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		c, err := t.Connect(ctx, n)
		if err == nil {
			c.Close(ctx)
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s not ready after %v: %w", n.Name, timeout, last)
}
