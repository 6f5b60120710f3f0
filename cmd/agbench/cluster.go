package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/links"
	"github.com/agbench/agbench/internal/routing"
	"github.com/agbench/agbench/internal/table"
	"github.com/agbench/agbench/internal/units"
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
		clusterSimpleCmd(a, "destroy"), clusterFailoverCmd(a), clusterListCmd(a), clusterEnvCmd(a), clusterLinksCmd(a))
	return c
}

func home(a *app) string { return cluster.Home(a.getenv) }

func clusterCreateCmd(a *app) *cobra.Command {
	o := cluster.CreateOptions{}
	var listenerAddr, hostMemory, linkLatency string
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
page cache: read-only routing can then move work but not add capacity.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Home = home(a)
			o.Progress = a.stderr
			if hostMemory != "" {
				n, err := units.ParseBytes(hostMemory)
				if err != nil || n <= 0 {
					return agerr.BadInputf("--host-memory %q: want a size such as 512M or 1G", hostMemory)
				}
				o.HostMemory = n
			}
			if linkLatency != "" {
				d, err := links.ParseLatency(linkLatency)
				if err != nil {
					return err
				}
				o.LinkLatency = d
				o.StartLinks = func(t *cluster.Topology) error { return startClusterLinks(cmd.Context(), a, t) }
			}
			if o.RoutingList != "" {
				l, err := routing.Parse(o.RoutingList)
				if err != nil {
					return agerr.BadInputf("--routing-list: %v", err)
				}
				if err := l.Check(cluster.CreatedNodeNames(o.Standbys)); err != nil {
					return agerr.BadInputf("--routing-list: %v", err)
				}
			}
			var li *cluster.ListenerInfo
			if listenerAddr != "" {
				var err error
				if li, err = clusterListenerInfo(listenerAddr); err != nil {
					return err
				}
				li.RoutingList = o.RoutingList
			}
			start := time.Now()
			topo, err := cluster.Create(cmd.Context(), o)
			if err != nil {
				return err
			}
			if li != nil {
				topo.Listener = li
				if err := startClusterListener(a, topo); err != nil {
					return fmt.Errorf("cluster %s created, but its listener did not start: %w", topo.Name, err)
				}
			}
			fmt.Fprintf(a.stdout, "cluster %s created in %.1fs: PostgreSQL %s, %d standby(s), %s commit\n\n",
				topo.Name, time.Since(start).Seconds(), topo.PG.Version, len(topo.Standbys()), topo.Commit)
			printStatus(a.stdout, topo.Status(cmd.Context()))
			fmt.Fprintf(a.stdout, "\nconnect: eval \"$(agbench cluster env --name %s)\" && psql\n", topo.Name)
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&o.Name, "name", "lab", "cluster name")
	f.IntVar(&o.Standbys, "standbys", 2, "number of hot standbys (0-9)")
	f.StringVar(&o.Commit, "commit", cluster.CommitAsync, "sync or async commit")
	f.IntVar(&o.BasePort, "base-port", cluster.DefaultBasePort, "port of the primary; standbys take the next ones")
	f.StringVar(&o.PGBin, "pg-bin", "", "folder of PostgreSQL server binaries (default: PATH, pg_config, /usr/lib/postgresql/*/bin)")
	f.StringVar(&o.OSUser, "os-user", "", "user that runs the servers when agbench runs as root (default postgres)")
	f.StringArrayVar(&o.Settings, "set", nil, "server setting key=value for every node (repeatable)")
	f.StringVar(&o.RoutingList, "routing-list", "", "the cluster's read-only routing list for its listener and routing comparisons, e.g. \"(('standby1','primary'))\" (default: the standbys, then the primary)")
	f.StringVar(&linkLatency, "link-latency", "", "put a link with this latency per round trip (e.g. 0.5ms) between clients and every node and on the replication connections")
	f.Float64Var(&o.HostCPUs, "host-cpus", 0, "model each node as a host with this many CPU cores (a control group's quota; needs root)")
	f.StringVar(&hostMemory, "host-memory", "", "model each node as a host with this much memory, page cache included (e.g. 1G; needs root)")
	f.StringVar(&listenerAddr, "listener", "", "also start `agbench listener` at this address (read-only port +1, metrics +2); --listener alone: 127.0.0.1:6432")
	f.StringVar(&o.HA, "ha", "", "patroni: Patroni (with a one-member etcd) runs the nodes and fails over by itself")
	f.IntVar(&o.PatroniTTL, "patroni-ttl", cluster.DefaultPatroniTTL, "with --ha patroni: the leader key's ttl, seconds")
	f.IntVar(&o.PatroniLoopWait, "patroni-loop-wait", cluster.DefaultPatroniLoopWait, "with --ha patroni: Patroni's loop_wait, seconds")
	f.IntVar(&o.PatroniRetryTimeout, "patroni-retry-timeout", cluster.DefaultPatroniRetryTimeout, "with --ha patroni: Patroni's retry_timeout, seconds (ttl ≥ loop_wait + 2 × retry_timeout)")
	f.Lookup("listener").NoOptDefVal = "127.0.0.1:6432"
	return c
}

func loadCluster(a *app, name string) (*cluster.Topology, error) {
	topo, err := cluster.Load(home(a), name)
	if err == nil && topo.Patroni != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		topo.RolesFromPatroni(ctx)
		cancel()
	}
	return topo, err
}

// loadClusterLocked loads a cluster and takes its lock for a change; call unlock when done.
func loadClusterLocked(a *app, name string) (*cluster.Topology, func(), error) {
	topo, err := cluster.Load(home(a), name)
	if err != nil {
		return nil, nil, err
	}
	unlock, err := topo.Lock()
	if err != nil {
		return nil, nil, err
	}
	if topo.Patroni != nil {
		// Patroni may have moved the primary since agbench last looked; when no REST API
		// answers (a stopped cluster), the roles stay as recorded.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, _ = topo.FollowPatroni(ctx)
		cancel()
	}
	return topo, unlock, nil
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
			printStatus(a.stdout, st)
			return nil
		},
	}
	c.Flags().StringVar(&name, "name", "lab", "cluster name")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func printStatus(w io.Writer, st *cluster.Status) {
	fmt.Fprintf(w, "cluster %s · PostgreSQL %s · %s commit\n", st.Name, st.Version, st.Commit)
	tw := table.NewWriter(w, table.Left)
	fmt.Fprintln(tw, "NODE\tROLE\tPORT\tSTATE\tREADABLE\tCURRENT/RECEIVED\tREPLAYED\tWRITE LAG\tFLUSH LAG\tREPLAY LAG\tSYNC")
	for _, n := range st.Nodes {
		lsn := n.CurrentLSN
		if n.Role == cluster.RoleStandby {
			lsn = n.ReceivedLSN
		}
		state := n.State
		if n.ReplayPaused {
			state += " (replay paused)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.Name, n.Role, n.Port, state, yesNo(n.Readable),
			dash(lsn), dash(n.ReplayedLSN), lag(n.WriteLagBytes, n.WriteLagSec), lag(n.FlushLagBytes, n.FlushLagSec),
			lag(n.ReplayLagBytes, n.ReplayLagSec), dash(n.SyncState))
	}
	tw.Flush()
	for _, n := range st.Nodes {
		if n.Error != "" {
			fmt.Fprintf(w, "%s: %s\n", n.Name, n.Error)
		}
	}
	if st.Listener != nil {
		fmt.Fprintln(w, listenerLine(st.Listener))
	}
	printHosts(w, st)
	if st.Links != nil {
		fmt.Fprintln(w, "links:", st.Links)
	}
	printPatroni(w, st)
}

// printHosts shows each node's modelled host: budget and use over status's sampling interval.
func printHosts(w io.Writer, st *cluster.Status) {
	if st.Hosts == nil {
		fmt.Fprintln(w, "hosts: the nodes share this machine's CPUs, memory and page cache (no budgets)")
		return
	}
	fmt.Fprintf(w, "\nhosts: %s\n", st.Hosts)
	tw := table.NewWriter(w, table.Left)
	fmt.Fprintln(tw, "NODE\tGROUP\tCPUS\tCPU BUDGET\tCPU USE\tTHROTTLED\tMEMORY BUDGET\tMEMORY USE\tPAGE CACHE\tPROCESSES")
	for _, n := range st.Nodes {
		h := n.Budget
		if h == nil {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\n", n.Name)
			continue
		}
		cpuBudget, memBudget := "none", "none"
		if h.CPUs > 0 {
			cpuBudget = fmt.Sprintf("%g cores", h.CPUs)
		}
		if h.Memory > 0 {
			memBudget = units.FormatBytes(h.Memory)
		}
		if h.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t- (%s)\t-\t%s\t-\t-\t-\n", n.Name, h.Group, h.CPUSet, cpuBudget, h.Error, memBudget)
			continue
		}
		use := fmt.Sprintf("%.2f cores", h.Cores)
		if h.CPUs > 0 {
			use += fmt.Sprintf(" (%.0f%%)", 100*h.Cores/h.CPUs)
		}
		thr := "-"
		if h.ThrottledShare != nil {
			thr = fmt.Sprintf("%.0f%% of periods", 100**h.ThrottledShare)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", n.Name, h.Group, h.CPUSet, cpuBudget, use, thr, memBudget,
			units.FormatBytes(h.Used), units.FormatBytes(h.Cache), h.Processes)
	}
	tw.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func lag(bytes *int64, sec *float64) string {
	if bytes == nil {
		return "-"
	}
	s := units.FormatBytes(*bytes)
	if sec != nil {
		s += fmt.Sprintf(" / %.3fs", *sec)
	}
	return s
}

func clusterSimpleCmd(a *app, verb string) *cobra.Command {
	var name string
	short := map[string]string{
		"start":   "Start every node (primary first) and wait until the standbys stream",
		"stop":    "Stop every node (fast shutdown)",
		"destroy": "Stop every node and remove the cluster's folder, and nothing else",
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
				err = startClusterLinks(cmd.Context(), a, topo)
				if err == nil {
					err = topo.Start(cmd.Context())
				}
				if err == nil && topo.Listener != nil {
					err = startClusterListener(a, topo)
				}
			case "stop":
				err = errors.Join(stopClusterListener(topo), topo.Stop(cmd.Context()))
				err = errors.Join(err, topo.StopLinks())
			case "destroy":
				err = topo.Destroy(cmd.Context())
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "cluster %s: %s done in %.1fs\n", topo.Name, verb, time.Since(start).Seconds())
			return nil
		},
	}
	c.Flags().StringVar(&name, "name", "lab", "cluster name")
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
			kind := "unplanned (primary was down)"
			switch {
			case r.Planned:
				kind = "planned (primary shut down cleanly first: no data loss)"
			case r.Silent:
				kind = "unplanned (primary did not answer: fenced)"
			case !r.FencedAt.IsZero():
				kind = "unplanned (primary fenced)"
			}
			fmt.Fprintf(a.stdout, "\nfailover %s -> %s, %s\nwrites unavailable for %.3fs; total %.3fs; old primary %s: %s\n",
				r.From, r.To, kind, r.WriteOutage.Seconds(), r.Total.Seconds(), r.From, r.OldPrimary)
			switch {
			case r.WALLacked != nil:
				fmt.Fprintf(a.stdout, "WAL %s lacked of %s: %s\n", r.To, r.From, units.FormatBytesShort(*r.WALLacked))
			case r.WALLackedNote != "":
				fmt.Fprintf(a.stdout, "WAL %s lacked of %s: %s\n", r.To, r.From, r.WALLackedNote)
			}
			for node, p := range r.Problems {
				fmt.Fprintf(a.stdout, "problem on %s: %s\n", node, p)
			}
			fmt.Fprintln(a.stdout)
			printStatus(a.stdout, topo.Status(cmd.Context()))
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
			names, err := cluster.List(home(a))
			if err != nil {
				return err
			}
			if len(names) == 0 {
				fmt.Fprintf(a.stdout, "no clusters under %s\n", home(a))
				return nil
			}
			tw := table.NewWriter(a.stdout, table.Left)
			fmt.Fprintln(tw, "NAME\tPOSTGRES\tCOMMIT\tPRIMARY\tNODES\tRUNNING")
			for _, n := range names {
				topo, err := cluster.Load(home(a), n)
				if err != nil {
					fmt.Fprintf(tw, "%s\t?\t?\t?\t?\t%v\n", n, err)
					continue
				}
				up := 0
				for _, r := range topo.Running() {
					if r {
						up++
					}
				}
				p := topo.Primary()
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s (%s:%d)\t%d\t%d\n", topo.Name, topo.PG.Version, topo.Commit, p.Name, p.Host, p.Port, len(topo.Nodes), up)
			}
			return tw.Flush()
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
			n := topo.Primary()
			if node != "" {
				if n = topo.Node(node); n == nil {
					return agerr.BadInputf("--node %s: no such node in cluster %s (nodes: %s)", node, topo.Name, strings.Join(topo.NodeNames(), ", "))
				}
			}
			for _, kv := range [][2]string{{"PGHOST", n.Host}, {"PGPORT", fmt.Sprint(n.Port)}, {"PGUSER", topo.Superuser},
				{"PGDATABASE", topo.Database}, {"PGPASSFILE", topo.PassFile}, {"PGSSLMODE", "disable"}} {
				fmt.Fprintf(a.stdout, "export %s=%s\n", kv[0], shellQuote(kv[1]))
			}
			return nil
		},
	}
	c.Flags().StringVar(&name, "name", "lab", "cluster name")
	c.Flags().StringVar(&node, "node", "", "node to connect to (default: the primary)")
	return c
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == ':' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
