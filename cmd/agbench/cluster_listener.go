package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
)

// The listener that `cluster create --listener` starts runs as `agbench listener --cluster
// NAME` in its own session, logs to listener.log in the cluster's folder, and is recorded in
// the topology (addresses and PID); `cluster stop` stops it, `cluster start` starts it
// again, `cluster destroy` stops it with the nodes.

// listenerStartTimeout bounds waiting for a background listener to accept connections.
const listenerStartTimeout = 30 * time.Second

// clusterListenerInfo derives the listener's ports from --listener ADDR: the read-only
// port is the next port and the metrics port the one after.
func clusterListenerInfo(addr string) (*cluster.ListenerInfo, error) {
	host, port, err := net.SplitHostPort(addr)
	p, perr := strconv.Atoi(port)
	if err != nil || perr != nil || p < 1 || p > 65533 {
		return nil, agerr.BadInputf("--listener %q: want host:port with a port below 65534 (the next two ports take read-only sessions and metrics)", addr)
	}
	at := func(d int) string { return net.JoinHostPort(host, strconv.Itoa(p+d)) }
	return &cluster.ListenerInfo{Listen: at(0), ReadOnlyListen: at(1), Metrics: at(2)}, nil
}

// selfBinary is the agbench binary to run in the background ($AGBENCH_SELF for tests,
// whose own binary is the test program).
func selfBinary(a *app) (string, error) {
	if s := a.getenv("AGBENCH_SELF"); s != "" {
		return s, nil
	}
	return os.Executable()
}

// startClusterListener starts the recorded listener of topo in the background, waits until
// it accepts connections, and records its PID.
func startClusterListener(a *app, topo *cluster.Topology) error {
	li := topo.Listener
	if li.Running() {
		return nil
	}
	self, err := selfBinary(a)
	if err != nil {
		return err
	}
	li.LogFile = filepath.Join(topo.Dir, "listener.log")
	if err := topo.Save(); err != nil { // the listener reads its addresses from the topology
		return err
	}
	logf, err := os.OpenFile(li.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(self, "listener", "--cluster", topo.Name)
	cmd.Env = append(os.Environ(), "AGBENCH_HOME="+home(a))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start listener: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reaps it if it dies while we are still here
	deadline := time.Now().Add(listenerStartTimeout)
	for {
		c, err := net.DialTimeout("tcp", li.Listen, time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case werr := <-exited:
			return fmt.Errorf("listener exited (%v): %s", werr, tail(li.LogFile))
		default:
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			return fmt.Errorf("listener did not accept connections on %s within %s: %s", li.Listen, listenerStartTimeout, tail(li.LogFile))
		}
		time.Sleep(100 * time.Millisecond)
	}
	li.PID = cmd.Process.Pid
	return topo.Save()
}

// stopClusterListener stops the cluster's background listener, if it runs, and keeps its
// record so that `cluster start` brings it back.
func stopClusterListener(topo *cluster.Topology) error {
	li := topo.Listener
	if li == nil || li.PID == 0 {
		return nil
	}
	if li.Running() {
		_ = syscall.Kill(li.PID, syscall.SIGTERM)
		deadline := time.Now().Add(15 * time.Second)
		for li.Running() && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if li.Running() {
			_ = syscall.Kill(li.PID, syscall.SIGKILL)
		}
	}
	li.PID = 0
	return topo.Save()
}

// listenerLine is the listener's line in `cluster status`.
func listenerLine(li *cluster.ListenerInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "listener: %s", li.Listen)
	if li.ReadOnlyListen != "" {
		fmt.Fprintf(&b, ", read-only port %s", li.ReadOnlyListen)
	}
	if li.Metrics != "" {
		fmt.Fprintf(&b, ", metrics http://%s/metrics", li.Metrics)
	}
	switch {
	case li.Running():
		fmt.Fprintf(&b, " · running (pid %d)", li.PID)
	default:
		b.WriteString(" · not running")
	}
	if li.LogFile != "" {
		fmt.Fprintf(&b, " · log %s", li.LogFile)
	}
	return b.String()
}

// tail is the end of a log file, for error messages.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	s := strings.TrimSpace(string(b))
	if len(s) > 800 {
		s = "..." + s[len(s)-800:]
	}
	return s
}
