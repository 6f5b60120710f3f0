package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/render"
)

func init() { register(newClusterCmd) }

func newClusterCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "cluster",
		Short: "A local availability group: a primary and readable hot standbys on loopback",
		Long: `A local PostgreSQL "availability group": one primary and N hot standbys, each a
streaming-replication standby with its own replication slot and application_name,
listening on 127.0.0.1 with SCRAM authentication. Clusters live under $AGBENCH_HOME
(default ~/.local/share/agbench; /var/lib/agbench for root) in clusters/NAME/, with a
topology.json that every other agbench command reads (--cluster NAME).`,
	}
	c.AddCommand(clusterCreateCmd(a), clusterStatusCmd(a), clusterSimpleCmd(a, "start"), clusterSimpleCmd(a, "stop"),
		clusterSimpleCmd(a, "destroy"), clusterFailoverCmd(a), clusterListCmd(a), clusterEnvCmd(a), clusterLinksCmd(a), clusterHostsCmd(a))
	return c
}

func home(a *app) string { return cluster.Home(a.getenv) }

func clusterCreateCmd(a *app) *cobra.Command {
	var f experiment.ClusterCreate
	c := &cobra.Command{
		Use:   "create",
		Short: "Create and start a cluster: initdb the primary, pg_basebackup each standby",
		Long: `Create and start a cluster. The primary is made with initdb and configured for
replication; each standby is made with pg_basebackup from it, with its own physical
replication slot and application_name/cluster_name (standby1, standby2, ...), as a
readable hot standby. Ports are base-port (primary), base-port+1, ... on 127.0.0.1.

--commit sync sets synchronous_standby_names = 'ANY 1 (standby1, ...)' and
synchronous_commit = on: every commit waits until one standby has flushed it.
--commit async leaves replication asynchronous.

A password is generated and kept in the cluster's pgpass file (mode 0600); see
'agbench cluster env'. Run as root, the servers run as the user postgres (or --os-user).
A create that fails or is interrupted removes everything it made.

--host-cpus and --host-memory model each node as a host of its own on this machine: every
node runs in a control group of its own (cgroup v2 where it is mounted with the cpu, cpuset
and memory controllers, else the v1 cpu, cpuacct, cpuset and memory hierarchies), made at
each hierarchy's root, with a CPU quota in cores (and ceil(cores) CPUs of its own where the
machine has enough) and a memory limit that its page cache is charged to. The postmaster is
started inside the group, so every backend is too; agbench itself (the load generator)
stays outside. This needs root. Without them, the nodes share the machine's CPUs, memory and
page cache: read-only routing can then move work but not add capacity.

A CPU quota is only a maximum: on a busy machine a node may get less. --host-cpu-shares auto
(the default) also gives each node's group a CPU weight in proportion to its budget
(cpu.shares, or cpu.weight under v2: 32 plain processes' worth per core), so that it still
gets its budget while others compete for its CPUs; "kernel" leaves the kernel's default.
The CPUs of each node are chosen around the groups agbench already has on this machine
(other clusters'), and cluster status names any it shares CPUs with.

--host-read-bps, --host-write-bps (bytes per second, e.g. 20M) and --host-read-iops,
--host-write-iops limit each node's IO on the disk that holds its data (the whole disk
of a partition), with v1's blkio throttle or v2's io.max. Under cgroup v1 buffered writes
are not held (the kernel writes them back outside the group): write limits hold direct
writes only there; reads are held, from the page cache's misses too.

--netns makes each node a host of its own on the network: every node runs in a network
namespace of its own (ip netns), joined by a veth pair to a bridge of the cluster in the
root namespace, with an address of its own on a private /24 that nothing on this machine
uses (the first free one of 10.213.0.0/16; this machine takes .1, the nodes .2, .3, ...).
Traffic flows only between the nodes and this machine: no NAT, no route out. Each node's
PostgreSQL listens on its address; the standbys stream from the primary's address over
TCP; agbench, the listener and the links reach the nodes there. Each node also gets
Debian's node_exporter (/usr/bin/prometheus-node-exporter) in its namespace, at
http://ADDRESS:9100/metrics, recorded as the node's host metrics for --cluster. It
combines with --host-* (the control groups), --link-latency, --listener and --ha patroni
(Patroni runs in each node's namespace, etcd on this machine's address on the subnet).
This needs root. Destroy removes the namespaces, veths, bridge and exporters,
also those of a create that was killed.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := f.Options(home(a), func() (string, error) { return selfBinary(a) }, a.stderr)
			if err != nil {
				return err
			}
			start := time.Now()
			topo, err := cluster.Create(cmd.Context(), o)
			if err != nil {
				return err
			}
			printCreated(cmd.Context(), a, topo, time.Since(start))
			return nil
		},
	}
	f.Register(c.Flags())
	return c
}

// printCreated prints a cluster just created: how long it took, its status, and how to
// connect to it.
func printCreated(ctx context.Context, a *app, topo *cluster.Topology, took time.Duration) {
	fmt.Fprintf(a.stdout, "cluster %s created in %.1fs: PostgreSQL %s, %d standby(s), %s commit\n\n",
		topo.Name, took.Seconds(), topo.PG.Version, len(topo.Standbys()), topo.Commit)
	render.ClusterStatus(a.stdout, topo.Status(ctx))
	fmt.Fprintf(a.stdout, "\nconnect: eval \"$(agbench cluster env --name %s)\" && psql\n", topo.Name)
}

// printClusterDone is the line of a cluster command that changed every node (verb).
func printClusterDone(a *app, name, verb string, took time.Duration) {
	fmt.Fprintf(a.stdout, "cluster %s: %s done in %.1fs\n", name, verb, took.Seconds())
}

// loadCluster loads a cluster to read it (cluster.Open).
func loadCluster(a *app, name string) (*cluster.Topology, error) {
	return cluster.Open(context.Background(), home(a), name)
}

// loadClusterLocked loads a cluster and takes its lock for a change (cluster.OpenLocked);
// call unlock when done.
func loadClusterLocked(a *app, name string) (*cluster.Topology, func(), error) {
	return cluster.OpenLocked(context.Background(), home(a), name)
}

func clusterStatusCmd(a *app) *cobra.Command {
	var name string
	var asJSON bool
	c := &cobra.Command{
		Use:   "status",
		Short: "Show each node's role, state, LSNs, replication lag and sync state",
		Long: `Show each node: role, port, state, current (primary) or received and replayed (standby)
WAL positions, write/flush/replay lag in bytes behind the primary's current position and in
time (from pg_stat_replication), sync state, and whether it is readable. --json for machines.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			topo, err := loadCluster(a, name)
			if err != nil {
				return err
			}
			st := topo.Status(cmd.Context())
			if asJSON {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(st)
			}
			render.ClusterStatus(a.stdout, st)
			return nil
		},
	}
	c.Flags().StringVar(&name, "name", "lab", "cluster name")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func clusterSimpleCmd(a *app, verb string) *cobra.Command {
	var name string
	short := map[string]string{
		"start":   "Start every node (primary first) and wait until the standbys stream",
		"stop":    "Stop every node (fast shutdown)",
		"destroy": "Stop every node and the listener, remove the nodes' control groups, network namespaces (veths, bridge, exporters) and the cluster's folder",
	}[verb]
	c := &cobra.Command{
		Use:   verb,
		Short: short,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			topo, unlock, err := loadClusterLocked(a, name)
			if err != nil {
				return err
			}
			defer unlock()
			start := time.Now()
			switch verb {
			case "start":
				var self cluster.Self
				if self, err = clusterSelf(a); err == nil {
					err = topo.StartAll(cmd.Context(), self)
				}
			case "stop":
				err = topo.StopAll(cmd.Context())
			case "destroy":
				err = topo.Destroy(cmd.Context())
			}
			if err != nil {
				return err
			}
			printClusterDone(a, topo.Name, verb, time.Since(start))
			return nil
		},
	}
	c.Flags().StringVar(&name, "name", "lab", "cluster name")
	return c
}

func clusterHostsCmd(a *app) *cobra.Command {
	var name, budgets string
	c := &cobra.Command{
		Use:   "hosts",
		Short: "Lift a modelled cluster's host budgets, or put them back, while it runs",
		Long: `Lift the budgets of a cluster made with --host-cpus, --host-memory or IO limits
(--budgets off), or put them back (--budgets on), while the nodes run. Lifted, every node
stays in its control group, which keeps counting its CPU, memory and IO, but holds it to
nothing: every CPU, no quota, the kernel's CPU weight, no memory or IO limit. The nodes then
share the machine as a cluster without budgets does, with the same data, the same settings
and the same counting: measure a workload both ways to see what the budgets themselves cost.
Results record the state in their topology; with budgets lifted a routing comparison gets
the shared-host verdict. Put back, each node's CPUs are chosen anew around other clusters'
groups, as create chooses them. Needs root.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var on bool
			switch budgets {
			case "on":
				on = true
			case "off":
			default:
				return agerr.BadInputf("--budgets %q: want on or off", budgets)
			}
			topo, unlock, err := loadClusterLocked(a, name)
			if err != nil {
				return err
			}
			defer unlock()
			if err := topo.SetBudgets(on); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "cluster %s: %s\n", topo.Name, topo.Hosts)
			return nil
		},
	}
	c.Flags().StringVar(&name, "name", "lab", "cluster name")
	c.Flags().StringVar(&budgets, "budgets", "", "off: lift every node's budget (its group only counts); on: put the budgets back")
	return c
}

func clusterFailoverCmd(a *app) *cobra.Command {
	var name string
	o := cluster.FailoverOptions{}
	c := &cobra.Command{
		Use:   "failover",
		Short: "Promote a standby, re-point the others, bring the old primary back as a standby",
		Long: `Promote a standby to primary: the one named with --to, or the one that received the
most WAL. When the primary is up, it is first shut down cleanly and the new primary replays
all of its WAL, so no committed transaction is lost. The other standbys are re-pointed to the
new primary; the old primary comes back as a standby (pg_rewind where needed). The topology
file follows. Prints the time writes were unavailable and the total time.

A primary that runs but does not answer within --probe-timeout (default 10s: frozen,
hung) is fenced
first: every process of its server is stopped and killed (SIGSTOP, then SIGKILL), so that
none acknowledges a commit after the promotion; then the standby that received the most WAL
is promoted. --fence does the same to a primary that still answers (cut off from its
standbys, say): no clean shutdown, no wait for the standbys to catch up. After such an
unplanned failover the WAL the new primary lacked of the old one is printed.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.ProbeTimeout <= 0 {
				return agerr.BadInputf("--probe-timeout %v: must be positive", o.ProbeTimeout)
			}
			topo, unlock, err := loadClusterLocked(a, name)
			if err != nil {
				return err
			}
			defer unlock()
			o.Progress = a.stdout
			r, err := topo.Failover(cmd.Context(), o)
			if err != nil {
				return err
			}
			render.Failover(a.stdout, r, topo.CommitsWaitedForOldPrimary(r))
			render.ClusterStatus(a.stdout, topo.Status(cmd.Context()))
			if len(r.Problems) > 0 {
				return fmt.Errorf("failover done, but %d node(s) did not rejoin", len(r.Problems))
			}
			return nil
		},
	}
	c.Flags().StringVar(&name, "name", "lab", "cluster name")
	c.Flags().StringVar(&o.To, "to", "", "standby to promote (default: the most advanced)")
	c.Flags().BoolVar(&o.Force, "force", false, "promote a standby that is behind another (loses what only the other received)")
	c.Flags().BoolVar(&o.Fence, "fence", false, "treat the running primary as failed: kill its server (SIGKILL) and promote without waiting for the standbys to catch up")
	c.Flags().DurationVar(&o.ProbeTimeout, "probe-timeout", cluster.DefaultProbeTimeout, "a running primary silent this long is taken for failed and fenced")
	return c
}

func clusterListCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the clusters under $AGBENCH_HOME",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			clusters, err := cluster.Summaries(home(a))
			if err != nil {
				return err
			}
			return render.ClusterList(a.stdout, home(a), clusters)
		},
	}
}

func clusterEnvCmd(a *app) *cobra.Command {
	var name, node string
	c := &cobra.Command{
		Use:   "env",
		Short: "Print shell exports (PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSFILE) for a node",
		Long: `Print shell exports so that psql, pgbench and scripts connect to the primary (or the
node named with --node) with no further set-up:

  eval "$(agbench cluster env --name lab)" && psql -c 'select pg_is_in_recovery()'

The password stays in the pgpass file; it is never printed.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			topo, err := loadCluster(a, name)
			if err != nil {
				return err
			}
			env, err := topo.Env(node)
			if err != nil {
				return err
			}
			render.ShellExports(a.stdout, env)
			return nil
		},
	}
	c.Flags().StringVar(&name, "name", "lab", "cluster name")
	c.Flags().StringVar(&node, "node", "", "node to connect to (default: the primary)")
	return c
}
