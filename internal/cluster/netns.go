package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/netns"
	"github.com/agbench/agbench/internal/status"
)

// Nodes as hosts of their own (create --netns): each node in a network namespace named after
// the cluster (GroupPrefix, as its control groups: the cluster's name and a hash of its
// folder, then the node's name), joined to the cluster's bridge by a veth pair, listening on
// its own address of the cluster's /24, with a Prometheus node_exporter of its own beside it.
// Everything is found again by those names, so that destroy removes it even when a create
// was killed before recording it, and never touches another cluster's.

// The records of a cluster's namespaces and exporters (status.go's types).
type (
	NetnsInfo = status.NetnsInfo
	NodeNetns = status.NodeNetns
	Exporter  = status.Exporter
)

// ExporterBinary is Debian's node_exporter (package prometheus-node-exporter).
const ExporterBinary = "/usr/bin/prometheus-node-exporter"

// ExporterPort is the port each node's exporter listens on, at the node's address.
const ExporterPort = 9100

// exporterCollectors are the collectors each node's exporter runs: CPU by mode, the run
// queue and context switches (stat, loadavg, pressure), memory and page cache (meminfo,
// vmstat), each device's IO (diskstats) and space (filesystem), the namespace's network
// (netdev), and its clock (time) for the offset from agbench's. The rest of node_exporter's
// defaults only make a scrape cost more.
var exporterCollectors = []string{"cpu", "diskstats", "filesystem", "loadavg", "meminfo", "netdev", "pressure", "stat", "time", "uname", "vmstat"}

// exporterStopGrace is how long an exporter has to end after SIGTERM before it is killed.
const exporterStopGrace = 5 * time.Second

// strayStopGrace is how long a process left in a namespace destroy removes (a crashed
// create's) has to end after SIGTERM.
const strayStopGrace = 5 * time.Second

// netnsGoneWait bounds the wait for a deleted namespace's veth to leave the root namespace
// (the kernel frees a namespace in the background).
const netnsGoneWait = 10 * time.Second

// netnsID is the 8 hex digits that name the cluster's bridge and veths: a hash of its folder,
// as in its control groups' names.
func (t *Topology) netnsID() string {
	h := sha256.Sum256([]byte(t.Dir))
	return hex.EncodeToString(h[:4])
}

// nsName is the network namespace of node name.
func (t *Topology) nsName(node string) string { return t.groupPrefix() + node }

// checkNetns asks for root when the nodes go in namespaces of their own.
func (o *CreateOptions) checkNetns() error {
	if !o.Netns {
		return nil
	}
	return netns.RequireRoot()
}

// makeNetns gives the new cluster its subnet (the first free /24 of netns.Pool, claimed by
// its bridge's address while the machine's lock is held), then each node its namespace,
// veth and address, recording each in the topology as it is made.
func (t *Topology) makeNetns(w io.Writer) error {
	unlock, err := netns.Lock()
	if err != nil {
		return err
	}
	subnet, err := netns.FreeSubnet()
	if err == nil {
		gw := hostAddr(subnet, 1)
		t.Netns = &NetnsInfo{Subnet: subnet.String(), Gateway: gw.String(), Bridge: netns.Bridge(t.netnsID())}
		err = netns.AddBridge(t.Netns.Bridge, netip.PrefixFrom(gw, subnet.Bits()))
	}
	unlock()
	if err != nil {
		return err
	}
	progress(w, "network namespaces: %s", t.Netns)
	for i := range t.Nodes {
		n := &t.Nodes[i]
		n.Netns = &NodeNetns{Namespace: t.nsName(n.Name), Veth: netns.Veth(t.netnsID(), i)}
		n.Host = hostAddr(subnet, 2+i).String()
		if n.LinkPort > 0 {
			n.LinkHost = t.Netns.Gateway
		}
		if err := t.Save(); err != nil {
			return err
		}
		if err := t.joinNetns(n); err != nil {
			return err
		}
	}
	return nil
}

// hostAddr is the i-th address of a /24.
func hostAddr(subnet netip.Prefix, i int) netip.Addr {
	a := subnet.Masked().Addr().As4()
	a[3] = byte(i)
	return netip.AddrFrom4(a)
}

// joinNetns makes node n's namespace and veth with its address, each unless it is there.
func (t *Topology) joinNetns(n *Node) error {
	subnet, err := netip.ParsePrefix(t.Netns.Subnet)
	if err != nil {
		return fmt.Errorf("topology's subnet %q: %w", t.Netns.Subnet, err)
	}
	addr, err := netip.ParseAddr(n.Host)
	if err != nil {
		return fmt.Errorf("node %s: address %q: %w", n.Name, n.Host, err)
	}
	if err := netns.Add(n.Netns.Namespace); err != nil {
		return fmt.Errorf("namespace of %s: %w", n.Name, err)
	}
	if err := netns.AddVeth(n.Netns.Namespace, n.Netns.Veth, t.Netns.Bridge, netip.PrefixFrom(addr, subnet.Bits())); err != nil {
		return fmt.Errorf("veth of %s: %w", n.Name, err)
	}
	return nil
}

// ensureNetns makes again what a cluster's namespaces need and lacks (after a reboot, which
// empties /run): the bridge with its address, each node's namespace and veth.
func (t *Topology) ensureNetns() error {
	if t.Netns == nil {
		return nil
	}
	if err := netns.RequireRoot(); err != nil {
		return err
	}
	subnet, err := netip.ParsePrefix(t.Netns.Subnet)
	gw, gerr := netip.ParseAddr(t.Netns.Gateway)
	if err != nil || gerr != nil {
		return fmt.Errorf("topology's subnet %q or gateway %q is not an address", t.Netns.Subnet, t.Netns.Gateway)
	}
	if err := netns.AddBridge(t.Netns.Bridge, netip.PrefixFrom(gw, subnet.Bits())); err != nil {
		return err
	}
	for i := range t.Nodes {
		if n := &t.Nodes[i]; n.Netns != nil {
			if err := t.joinNetns(n); err != nil {
				return err
			}
		}
	}
	return nil
}

// netnsHBA is what pg_hba.conf allows besides loopback: SCRAM from the cluster's subnet.
func (t *Topology) netnsHBA() string {
	if t.Netns == nil {
		return ""
	}
	return fmt.Sprintf("host    all          all   %s  scram-sha-256\nhost    replication  all   %s  scram-sha-256\n", t.Netns.Subnet, t.Netns.Subnet)
}

// netnsPassHosts are the hosts of the cluster's subnet that the pgpass file names (libpq
// matches a host exactly or by "*", which would hand the password to any server).
func (t *Topology) netnsPassHosts() []string {
	if t.Netns == nil {
		return nil
	}
	subnet, err := netip.ParsePrefix(t.Netns.Subnet)
	if err != nil {
		return nil
	}
	var out []string
	for i := 1; i < 255; i++ {
		out = append(out, hostAddr(subnet, i).String())
	}
	return out
}

// exporterRunning reports whether node n's recorded exporter runs.
func exporterRunning(n *Node) bool {
	return n.Exporter != nil && agbenchRuns(n.Exporter.PID, "--web.listen-address="+n.Exporter.Listen)
}

// startExporter starts node n's node_exporter in its namespace unless it runs, as the
// servers' OS user, waits until it accepts connections at the node's address, and records
// its pid and URL.
func (t *Topology) startExporter(ctx context.Context, n *Node) error {
	if n.Netns == nil || exporterRunning(n) {
		return nil
	}
	e := &Exporter{Listen: net.JoinHostPort(n.Host, strconv.Itoa(ExporterPort)), LogFile: filepath.Join(t.Dir, "logs", n.Name+"-exporter.log")}
	args := []string{"--web.listen-address=" + e.Listen, "--collector.disable-defaults"}
	for _, c := range exporterCollectors {
		args = append(args, "--collector."+c)
	}
	cmd := t.user().Command(context.Background(), ExporterBinary, args...)
	netns.Enter(cmd, n.Netns.Namespace)
	d, err := startDaemon(cmd, e.LogFile, 0o644)
	if err != nil {
		return fmt.Errorf("start the exporter of %s: %w", n.Name, err)
	}
	if err := d.waitAccepting(ctx, "exporter of "+n.Name, []endpoint{{"exporter of " + n.Name, e.Listen}}, serveTimeout, e.LogFile); err != nil {
		return err
	}
	e.PID = d.pid
	n.Exporter, n.HostMetrics = e, e.URL()
	return t.Save()
}

// stopExporter stops node n's exporter if it runs, keeping its record for the next start.
func (t *Topology) stopExporter(n *Node) error {
	if n.Exporter == nil {
		return nil
	}
	if exporterRunning(n) {
		if _, err := stopProcess(n.Exporter.PID, syscall.SIGTERM, exporterStopGrace); err != nil {
			return fmt.Errorf("stop the exporter of %s: %w", n.Name, err)
		}
	}
	n.Exporter.PID = 0
	return nil
}

// StopExporter stops node name's exporter (a cluster in namespaces), by the pid its record
// holds once that pid is still the exporter's, and saves the topology; StartExporters
// starts it again. The node's host is then unread until it does.
func (t *Topology) StopExporter(name string) error {
	n := t.Node(name)
	if n == nil || n.Exporter == nil {
		return fmt.Errorf("cluster %s: node %s has no exporter of its own", t.Name, name)
	}
	if err := t.stopExporter(n); err != nil {
		return err
	}
	return t.Save()
}

// StartExporters starts every node's exporter that does not run (a cluster in namespaces).
func (t *Topology) StartExporters(ctx context.Context) error {
	for i := range t.Nodes {
		if err := t.startExporter(ctx, &t.Nodes[i]); err != nil {
			return err
		}
	}
	return nil
}

// StopExporters stops every node's exporter and saves the topology when one was recorded
// running.
func (t *Topology) StopExporters() error {
	var errs []error
	changed := false
	for i := range t.Nodes {
		n := &t.Nodes[i]
		if n.Exporter != nil && n.Exporter.PID != 0 {
			changed = true
			errs = append(errs, t.stopExporter(n))
		}
	}
	if changed {
		errs = append(errs, t.Save())
	}
	return errors.Join(errs...)
}

// removeNetns removes everything of the cluster's namespaces, found by their names whether
// or not the topology recorded them: each node's exporter, every process left in a namespace
// (a crashed create's: the nodes are stopped before), the namespaces, their veths and the
// bridge. It waits until the veths have left the root namespace.
func (t *Topology) removeNetns() error {
	var errs []error
	for i := range t.Nodes {
		errs = append(errs, t.stopExporter(&t.Nodes[i]))
	}
	names, err := netns.List(t.groupPrefix())
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, ns := range names {
		errs = append(errs, stopAllIn(ns), netns.Delete(ns))
	}
	errs = append(errs, t.removeLinks())
	return errors.Join(errs...)
}

// removeLinks deletes the cluster's veths and bridge, and waits until they are gone (a
// namespace freed in the background takes its veth along a moment later).
func (t *Topology) removeLinks() error {
	deadline := time.Now().Add(netnsGoneWait)
	for {
		links, err := netns.Links(t.netnsID())
		if err != nil || len(links) == 0 {
			return err
		}
		// Veths first, the bridge last.
		slices.SortFunc(links, func(a, b string) int { return len(b) - len(a) })
		var errs []error
		for _, l := range links {
			if err := netns.DeleteLink(l); err != nil && netns.LinkExists(l) {
				errs = append(errs, err)
			}
		}
		if time.Now().After(deadline) {
			return errors.Join(append(errs, fmt.Errorf("interfaces %s still there %v after their removal", strings.Join(links, ", "), netnsGoneWait))...)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// planNetns gives a node that joins the cluster its namespace, the first veth number and
// the first address of the subnet that no node has; nothing is made yet (joinNetns does).
func (t *Topology) planNetns(n *Node) error {
	subnet, err := netip.ParsePrefix(t.Netns.Subnet)
	if err != nil {
		return fmt.Errorf("topology's subnet %q: %w", t.Netns.Subnet, err)
	}
	hosts, veths := map[string]bool{t.Netns.Gateway: true}, map[string]bool{}
	for _, o := range t.Nodes {
		hosts[o.Host] = true
		if o.Netns != nil {
			veths[o.Netns.Veth] = true
		}
	}
	n.Host = ""
	for i := 2; i < 255 && n.Host == ""; i++ {
		if a := hostAddr(subnet, i).String(); !hosts[a] {
			n.Host = a
		}
	}
	if n.Host == "" {
		return agerr.BadInputf("cluster %s: no free address left on %s for a new node", t.Name, t.Netns.Subnet)
	}
	n.Netns = &NodeNetns{Namespace: t.nsName(n.Name)}
	for i := 0; n.Netns.Veth == ""; i++ {
		if v := netns.Veth(t.netnsID(), i); !veths[v] {
			n.Netns.Veth = v
		}
	}
	return nil
}

// removeNodeNetns removes node n's exporter, what runs in its namespace, the namespace and
// its veth (the node is stopped before).
func (t *Topology) removeNodeNetns(n *Node) error {
	errs := []error{t.stopExporter(n)}
	if netns.Exists(n.Netns.Namespace) {
		errs = append(errs, stopAllIn(n.Netns.Namespace))
	}
	errs = append(errs, netns.Delete(n.Netns.Namespace), netns.DeleteLink(n.Netns.Veth))
	return errors.Join(errs...)
}

// stopAllIn stops every process in namespace ns (stopProcess: SIGTERM, then SIGKILL).
func stopAllIn(ns string) error {
	pids, err := netns.PIDs(ns)
	errs := []error{err}
	for _, pid := range pids {
		if _, err := stopProcess(pid, syscall.SIGTERM, strayStopGrace); err != nil {
			errs = append(errs, fmt.Errorf("namespace %s: %w", ns, err))
		}
	}
	return errors.Join(errs...)
}

// netnsStatus is node n's own host for `cluster status`.
func netnsStatus(n *Node) *status.NodeHost {
	if n.Netns == nil {
		return nil
	}
	h := &status.NodeHost{Namespace: n.Netns.Namespace}
	if n.Exporter != nil {
		h.Exporter, h.ExporterPID, h.ExporterRunning = n.Exporter.URL(), n.Exporter.PID, exporterRunning(n)
	}
	if !netns.Exists(n.Netns.Namespace) {
		h.Namespace += " (gone)"
	}
	return h
}
