package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/agbench/agbench/internal/agerr"
)

// A cluster's listener and its links are served by agbench itself, in the background:
// `agbench listener --cluster NAME` and `agbench cluster links --name NAME`, each in a
// session of its own, logging to listener.log and links.log in the cluster's folder, known
// by the pid the topology records. Start brings them up around the nodes (links first: the
// standbys stream through them; the listener last: it routes to running nodes), StopAll takes
// them down, Destroy with everything else.

// Self is the agbench program that serves a cluster's listener and links, and the home
// (AGBENCH_HOME) in which those processes find the cluster.
type Self struct {
	Binary string
	Home   string
}

// serveTimeout bounds waiting for a background listener or links process to accept
// connections.
const serveTimeout = 30 * time.Second

// Grace periods between SIGTERM and SIGKILL: the listener drains its sessions; the links
// have nothing to drain.
const (
	listenerStopGrace = 15 * time.Second
	linksStopGrace    = 5 * time.Second
)

// ListenerAt is the listener that create --listener ADDR asks for: the main port at addr,
// the read-only port the next one, and the metrics port the one after.
func ListenerAt(addr string) (*ListenerInfo, error) {
	host, port, err := net.SplitHostPort(addr)
	p, perr := strconv.Atoi(port)
	if err != nil || perr != nil || p < 1 || p > 65533 {
		return nil, agerr.BadInputf("--listener %q: want host:port with a port below 65534 (the next two ports take read-only sessions and metrics)", addr)
	}
	at := func(d int) string { return net.JoinHostPort(host, strconv.Itoa(p+d)) }
	return &ListenerInfo{Listen: at(0), ReadOnlyListen: at(1), Metrics: at(2)}, nil
}

func (s Self) command(args ...string) *exec.Cmd {
	cmd := exec.Command(s.Binary, args...)
	cmd.Env = append(os.Environ(), "AGBENCH_HOME="+s.Home)
	return cmd
}

// StartAll starts what `agbench cluster start` starts: the nodes' namespaces where they are
// missing, the links process (the standbys stream through it), then the nodes, their
// exporters, then the listener; each only if the cluster has it and it does not run.
func (t *Topology) StartAll(ctx context.Context, self Self) error {
	if err := t.ensureNetns(); err != nil {
		return err
	}
	if err := t.StartLinks(ctx, self); err != nil {
		return err
	}
	if err := t.Start(ctx); err != nil {
		return err
	}
	if err := t.StartExporters(ctx); err != nil {
		return err
	}
	return t.StartListener(ctx, self)
}

// StopAll stops the listener, the nodes, the links, then the nodes' exporters, each even
// when another failed. Their records stay, so that StartAll brings them back.
func (t *Topology) StopAll(ctx context.Context) error {
	return errors.Join(t.StopListener(), t.Stop(ctx), t.StopLinks(), t.StopExporters())
}

// StartListener starts the recorded listener in the background unless it runs, waits until
// it accepts connections, and records its pid.
func (t *Topology) StartListener(ctx context.Context, self Self) error {
	li := t.Listener
	if li == nil || listenerRunning(li) {
		return nil
	}
	li.LogFile = filepath.Join(t.Dir, "listener.log")
	if err := t.Save(); err != nil { // the listener reads its addresses from the topology
		return err
	}
	d, err := startDaemon(self.command("listener", "--cluster", t.Name), li.LogFile, 0o644)
	if err != nil {
		return fmt.Errorf("start listener: %w", err)
	}
	if err := d.waitAccepting(ctx, "listener", []endpoint{{"listener", li.Listen}}, serveTimeout, li.LogFile); err != nil {
		return err
	}
	li.PID = d.pid
	return t.Save()
}

// StopListener stops the cluster's background listener, if it runs, and keeps its record so
// that the next start brings it back.
func (t *Topology) StopListener() error {
	if t.Listener == nil || t.Listener.PID == 0 {
		return nil
	}
	if err := t.stopListenerProcess(); err != nil {
		return err
	}
	return t.Save()
}

func (t *Topology) stopListenerProcess() error {
	if t.ListenerAlive() {
		if _, err := stopProcess(t.Listener.PID, syscall.SIGTERM, listenerStopGrace); err != nil {
			return fmt.Errorf("stop listener: %w", err)
		}
	}
	if t.Listener != nil {
		t.Listener.PID = 0
	}
	return nil
}

// StartLinks starts the process that serves the cluster's links in the background unless it
// runs, waits until every link accepts connections, and records its pid.
func (t *Topology) StartLinks(ctx context.Context, self Self) error {
	if t.Links == nil || t.LinksAlive() {
		return nil
	}
	t.Links.LogFile = filepath.Join(t.Dir, "links.log")
	if err := t.Save(); err != nil { // the links process reads the topology
		return err
	}
	d, err := startDaemon(self.command("cluster", "links", "--name", t.Name), t.Links.LogFile, 0o644)
	if err != nil {
		return fmt.Errorf("start links: %w", err)
	}
	var eps []endpoint
	for _, s := range t.LinkSpecs() {
		eps = append(eps, endpoint{"link " + s.Name, s.Listen})
	}
	if err := d.waitAccepting(ctx, "links", eps, serveTimeout, t.Links.LogFile); err != nil {
		return err
	}
	t.Links.PID = d.pid
	return t.Save()
}

// StopLinks stops the process that serves the links, if it runs, and keeps their record
// so that the next start brings them back.
func (t *Topology) StopLinks() error {
	if t.Links == nil || t.Links.PID == 0 {
		return nil
	}
	if err := t.stopLinksProcess(); err != nil {
		return err
	}
	return t.Save()
}

func (t *Topology) stopLinksProcess() error {
	if t.LinksAlive() {
		if _, err := stopProcess(t.Links.PID, syscall.SIGTERM, linksStopGrace); err != nil {
			return fmt.Errorf("stop links: %w", err)
		}
	}
	if t.Links != nil {
		t.Links.PID = 0
	}
	return nil
}
