package cluster_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/cgroup"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/netns"
)

// newNetnsCluster makes a cluster whose nodes are in network namespaces of their own and
// checks each node's address: on the cluster's subnet, not loopback, one per node.
func newNetnsCluster(t *testing.T, name string) *cluster.Topology {
	t.Helper()
	clustertest.RequireNetns(t)
	topo := clustertest.New(t, clustertest.Options{Name: name, Standbys: 1, Netns: true})
	if topo.Netns == nil {
		t.Fatal("the topology records no namespaces")
	}
	subnet := netip.MustParsePrefix(topo.Netns.Subnet)
	seen := map[string]bool{}
	for _, n := range topo.Nodes {
		a, err := netip.ParseAddr(n.Host)
		if err != nil || !subnet.Contains(a) || seen[n.Host] || n.Host == topo.Netns.Gateway {
			t.Fatalf("node %s at %q: want an address of its own on %s", n.Name, n.Host, subnet)
		}
		seen[n.Host] = true
	}
	return topo
}

// TestNetnsCluster: a row written on the primary is read on the standby through the
// standby's own address, the standby streams over TCP from its address, each node's
// exporter answers at its address with its own namespace's network, and destroy leaves no
// namespace, interface or process behind.
func TestNetnsCluster(t *testing.T) {
	t.Parallel()
	topo := newNetnsCluster(t, "ns")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, s := topo.Primary(), topo.Standbys()[0]
	pc := connect(t, topo, p)
	if _, err := pc.Exec(ctx, `CREATE TABLE seen (v text); INSERT INTO seen VALUES ('across namespaces')`); err != nil {
		t.Fatal(err)
	}
	var from string
	if err := pc.QueryRow(ctx, `SELECT host(client_addr) FROM pg_stat_replication WHERE application_name = $1`, s.Name).Scan(&from); err != nil || from != s.Host {
		t.Errorf("the primary sees %s stream from %q (%v); want its address %s", s.Name, from, err, s.Host)
	}
	if err := topo.WaitCaughtUp(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	sc, err := pgx.Connect(ctx, topo.ConnString(s, ""))
	if err != nil {
		t.Fatalf("connect to %s at %s: %v", s.Name, s.Host, err)
	}
	defer sc.Close(context.Background())
	var v, at string
	if err := sc.QueryRow(ctx, `SELECT v, host(inet_server_addr()) FROM seen`).Scan(&v, &at); err != nil || v != "across namespaces" || at != s.Host {
		t.Errorf("on %s: read %q at %q (%v); want the primary's row at %s", s.Name, v, at, err, s.Host)
	}
	for _, n := range topo.Nodes {
		checkExporter(t, n)
	}
	checkAddRemoveStandby(t, ctx, topo)
	exporters := exporterPIDs(t, topo)
	destroyAndCheck(t, topo, exporters)
}

// checkAddRemoveStandby adds a standby as seeding does: it gets a namespace, an address and
// an exporter of its own, and streams; removed, its namespace and veth go with it.
func checkAddRemoveStandby(t *testing.T, ctx context.Context, topo *cluster.Topology) {
	t.Helper()
	n := addStandby(t, ctx, topo, "")
	if n.Netns == nil || n.Host == topo.Primary().Host || !netip.MustParsePrefix(topo.Netns.Subnet).Contains(netip.MustParseAddr(n.Host)) {
		t.Fatalf("added standby %s at %s (%+v): want a namespace and an address of its own on %s", n.Name, n.Host, n.Netns, topo.Netns.Subnet)
	}
	checkExporter(t, n)
	if err := topo.RemoveStandby(ctx, n); err != nil {
		t.Fatal(err)
	}
	namespaces, links, err := cluster.NetnsLeft(topo)
	if err != nil || slices.Contains(namespaces, n.Netns.Namespace) || slices.Contains(links, n.Netns.Veth) || len(namespaces) != len(topo.Nodes) {
		t.Errorf("after removing %s: namespaces %v, interfaces %v (%v); want its own gone, the others' there", n.Name, namespaces, links, err)
	}
}

// checkExporter reads node n's exporter at its address: node_exporter's figures, the
// network counters of the node's namespace (its eth0, which the root namespace has not).
func checkExporter(t *testing.T, n cluster.Node) {
	t.Helper()
	if n.Exporter == nil || n.HostMetrics != "http://"+n.Host+":9100/metrics" {
		t.Errorf("node %s: exporter %+v, host metrics %q; want node_exporter at its address", n.Name, n.Exporter, n.HostMetrics)
		return
	}
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(n.HostMetrics)
	if err != nil {
		t.Errorf("node %s: %v", n.Name, err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, want := range []string{"node_time_seconds ", `node_cpu_seconds_total{cpu="0",mode="idle"}`, `node_network_receive_bytes_total{device="eth0"}`} {
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), want) {
			t.Errorf("node %s: %s answers %s without %s", n.Name, n.HostMetrics, resp.Status, want)
		}
	}
}

func exporterPIDs(t *testing.T, topo *cluster.Topology) []int {
	t.Helper()
	var pids []int
	for _, n := range topo.Nodes {
		if n.Exporter == nil || !cluster.Alive(n.Exporter.PID) {
			t.Fatalf("node %s: no exporter runs (%+v)", n.Name, n.Exporter)
		}
		pids = append(pids, n.Exporter.PID)
	}
	return pids
}

// destroyAndCheck destroys the cluster and checks that nothing of its namespaces is left:
// no namespace, bridge or veth of its names, and none of the processes given alive.
func destroyAndCheck(t *testing.T, topo *cluster.Topology, pids []int) {
	t.Helper()
	for _, n := range topo.Nodes {
		if pid, err := topo.OwnPostmaster(n.Name); err == nil {
			pids = append(pids, pid)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := topo.Destroy(ctx); err != nil {
		t.Fatalf("destroy: %v", err)
	}
	namespaces, links, err := cluster.NetnsLeft(topo)
	if err != nil || len(namespaces) > 0 || len(links) > 0 {
		t.Errorf("after destroy: namespaces %v, interfaces %v (%v); want none", namespaces, links, err)
	}
	for _, pid := range pids {
		if cluster.Alive(pid) {
			t.Errorf("after destroy: process %d still runs", pid)
		}
	}
}

// TestNetnsDestroyAfterCrash: a cluster whose every process died (each postmaster and each
// exporter killed) is destroyed whole: its namespaces and interfaces go too.
func TestNetnsDestroyAfterCrash(t *testing.T) {
	t.Parallel()
	topo := newNetnsCluster(t, "nscrash")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	exporters := exporterPIDs(t, topo)
	for _, n := range topo.Nodes {
		if err := topo.CrashNode(ctx, n.Name); err != nil {
			t.Fatal(err)
		}
	}
	for _, pid := range exporters {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	destroyAndCheck(t, topo, exporters)
}

// TestNetnsPatroni: under Patroni too each node is a host of its own: Patroni and its
// PostgreSQL run in the node's namespace, etcd on the root namespace's address, the REST API
// and the server at the node's address, the standby streams from the primary's; destroy
// leaves nothing.
func TestNetnsPatroni(t *testing.T) {
	t.Parallel()
	clustertest.RequirePatroni(t)
	clustertest.RequireNetns(t)
	topo := clustertest.New(t, clustertest.Options{Name: "nsha", Standbys: 1, HA: "patroni", Netns: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, s := topo.Primary(), topo.Standbys()[0]
	if topo.Patroni.Etcd.Host != topo.Netns.Gateway || !strings.HasPrefix(p.RESTURL(), "http://"+p.Host+":") {
		t.Errorf("etcd on %q, primary's REST API %s; want etcd on %s and the API at %s", topo.Patroni.Etcd.Host, p.RESTURL(), topo.Netns.Gateway, p.Host)
	}
	var from string
	if err := connect(t, topo, p).QueryRow(ctx, `SELECT host(client_addr) FROM pg_stat_replication`).Scan(&from); err != nil || from != s.Host {
		t.Errorf("the standby streams from %q (%v); want its address %s", from, err, s.Host)
	}
	for _, n := range topo.Nodes {
		checkExporter(t, n)
	}
	pids := exporterPIDs(t, topo)
	for _, n := range topo.Nodes {
		pids = append(pids, n.PatroniPID)
	}
	destroyAndCheck(t, topo, append(pids, topo.Patroni.Etcd.PID))
}

// TestNetnsHostBudget: a node that is a modelled host and a host of its own on the network
// runs in both: its postmaster is in its control group and in its namespace.
func TestNetnsHostBudget(t *testing.T) {
	requireHosts(t)
	clustertest.RequireNetns(t)
	topo := clustertest.New(t, clustertest.Options{Name: "nsbudget", Host: cgroup.Budget{CPUs: 0.5, Memory: 256 << 20},
		Settings: map[string]string{"shared_buffers": "32MB"}, Netns: true})
	n := topo.Primary()
	pm := postmaster(t, n)
	procs, err := n.Group.Procs()
	if err != nil || !slices.Contains(procs, pm) {
		t.Errorf("postmaster %d not in its group %s (%v, %v)", pm, n.Group.Name, procs, err)
	}
	in, err := os.Stat(fmt.Sprintf("/proc/%d/ns/net", pm))
	ns, nerr := os.Stat(netns.Path(n.Netns.Namespace))
	if err != nil || nerr != nil || !os.SameFile(in, ns) {
		t.Errorf("postmaster %d not in its namespace %s (%v, %v)", pm, n.Netns.Namespace, err, nerr)
	}
	checkExporter(t, *n)
}
