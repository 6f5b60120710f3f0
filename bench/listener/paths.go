package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agbench/agbench/bench/harness"
)

// pathSet is the proxies a run started, and where each path listens.
type pathSet struct {
	ports   map[string]int // "redirect" is absent: it asks the listener's /route per run
	pids    map[string]int // the process whose CPU is the path's own; absent: none
	cmds    []*exec.Cmd
	metrics int // the proxied listener's HTTP port (/route)
}

// Offsets of the ports of the processes a run starts, from the first of its free ports.
const (
	offListener = iota
	offMetrics
	offBouncer
	offHAProxy
	offUserListener
	offUserMetrics
	nPorts
)

func startPaths(ctx context.Context, p *harness.Cluster, bin string, paths []string) (*pathSet, error) {
	base, err := harness.FreePorts(nPorts)
	if err != nil {
		return &pathSet{}, err
	}
	s := &pathSet{ports: map[string]int{"direct": p.Topo.Primary().Port, "agbench": base + offListener,
		"agbench-user": base + offUserListener, "pgbouncer": base + offBouncer, "haproxy": base + offHAProxy},
		pids: map[string]int{}, metrics: base + offMetrics}
	addr := func(off int) string { return "127.0.0.1:" + strconv.Itoa(base+off) }
	for name, args := range map[string][]string{
		"agbench":      {"listener", "--cluster", "bench", "--listen", addr(offListener), "--metrics", addr(offMetrics)},
		"agbench-user": {"listener", "--cluster", "bench", "--forward", "user", "--listen", addr(offUserListener), "--metrics", addr(offUserMetrics)},
	} {
		if err := s.start(p, name, bin, args...); err != nil {
			return s, err
		}
	}
	if err := s.startBouncer(p, base+offBouncer); err != nil {
		return s, err
	}
	cfg := filepath.Join(p.Home, "haproxy.cfg")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(haproxyConfig, base+offHAProxy, p.Topo.Primary().Port)), 0o644); err != nil {
		return s, err
	}
	return s, s.start(p, "haproxy", lookPath("haproxy", "/usr/sbin/haproxy"), "-f", cfg, "-db")
}

const haproxyConfig = `global
	maxconn 1000
defaults
	mode tcp
	timeout connect 5s
	timeout client 1h
	timeout server 1h
frontend pg
	bind 127.0.0.1:%d
	default_backend pg
backend pg
	server primary 127.0.0.1:%d
`

// start starts a proxy in the background, its output in a log file beside the cluster.
func (s *pathSet) start(p *harness.Cluster, name, bin string, args ...string) error {
	log, err := os.Create(filepath.Join(p.Home, name+".log"))
	if err != nil {
		return err
	}
	defer log.Close()
	c := exec.Command(bin, args...)
	c.Env, c.Stdout, c.Stderr = p.Env, log, log
	if err := c.Start(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	s.cmds = append(s.cmds, c)
	s.pids[name] = c.Process.Pid
	return nil
}

// startBouncer starts pgbouncer in session mode. It refuses to run as root: under root it
// runs as the server's user, and its own pid is read from its pid file.
func (s *pathSet) startBouncer(p *harness.Cluster, port int) error {
	dir := filepath.Join(p.Home, "pgbouncer")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	password, err := p.Password()
	if err != nil {
		return err
	}
	files := map[string]string{
		"userlist.txt": fmt.Sprintf("%q %q\n", p.Topo.Superuser, password),
		"pgbouncer.ini": fmt.Sprintf(bouncerConfig, p.Topo.Primary().Port, port, filepath.Join(dir, "userlist.txt"),
			filepath.Join(dir, "pgbouncer.log"), filepath.Join(dir, "pgbouncer.pid")),
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			return err
		}
	}
	bouncer, args := lookPath("pgbouncer", "/usr/sbin/pgbouncer"), []string{filepath.Join(dir, "pgbouncer.ini")}
	if os.Geteuid() == 0 {
		if out, err := exec.Command("chown", "-R", "postgres", dir).CombinedOutput(); err != nil {
			return fmt.Errorf("chown %s: %v %s", dir, err, out)
		}
		bouncer, args = "runuser", append([]string{"-u", "postgres", "--", bouncer}, args...)
	}
	if err := s.start(p, "pgbouncer", bouncer, args...); err != nil {
		return err
	}
	delete(s.pids, "pgbouncer") // runuser's, until pgbouncer's own is read (check)
	return nil
}

const bouncerConfig = `[databases]
* = host=127.0.0.1 port=%d
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = scram-sha-256
auth_file = %s
pool_mode = session
max_client_conn = 200
default_pool_size = 64
logfile = %s
pidfile = %s
`

// stop ends the proxies this run started, by their pids, and waits for them.
func (s *pathSet) stop() {
	for _, c := range s.cmds {
		c.Process.Signal(syscall.SIGTERM)
	}
	if pid, ok := s.pids["pgbouncer"]; ok { // under runuser, pgbouncer is runuser's child
		syscall.Kill(pid, syscall.SIGTERM)
	}
	for _, c := range s.cmds {
		c.Wait()
	}
}

// port is where a path listens now; the redirect path asks the proxied listener's /route
// for a read-write session, as a client that follows redirects would at login.
func (s *pathSet) port(ctx context.Context, path string) (int, error) {
	if path != "redirect" {
		return s.ports[path], nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		fmt.Sprintf("http://127.0.0.1:%d/route?intent=read-write", s.metrics), nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var route struct {
		Addr string `json:"addr"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&route); err != nil || resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("/route: %s %v", resp.Status, err)
	}
	_, port, err := net.SplitHostPort(route.Addr)
	if err != nil {
		return 0, fmt.Errorf("/route: address %q: %w", route.Addr, err)
	}
	return strconv.Atoi(port)
}

// bouncerPID reads pgbouncer's own pid from its pid file, once it has written it.
func bouncerPID(p *harness.Cluster) (int, bool) {
	b, err := os.ReadFile(filepath.Join(p.Home, "pgbouncer", "pgbouncer.pid"))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid, err == nil
}

func lookPath(name, fallback string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return fallback
}

// pgbenchBinary is pgbench on PATH, else the newest PostgreSQL's under /usr/lib/postgresql.
func pgbenchBinary() (string, error) {
	if p, err := exec.LookPath("pgbench"); err == nil {
		return p, nil
	}
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pgbench")
	if len(m) == 0 {
		return "", fmt.Errorf("no pgbench on PATH nor under /usr/lib/postgresql")
	}
	return m[len(m)-1], nil
}

// waitUntil polls ok until it holds or the deadline passes.
func waitUntil(ctx context.Context, d time.Duration, ok func() error) error {
	deadline := time.Now().Add(d)
	for {
		err := ok()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
