package experiment

import (
	"io"

	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cgroup"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/links"
	"github.com/agbench/agbench/internal/plan"
	"github.com/agbench/agbench/internal/routing"
)

// ClusterCreate is cluster create's flags and their reading into cluster.Create's options:
// the command and a study's cluster target (ClusterOptions) go through the same flags and
// the same checks, so that a plan creates the cluster the command would.
type ClusterCreate struct {
	o                                    cluster.CreateOptions
	host                                 cgroup.BudgetText
	listener, linkLatency, linkBandwidth string
	fs                                   *pflag.FlagSet
}

// Register adds cluster create's flags to f.
func (c *ClusterCreate) Register(f *pflag.FlagSet) {
	c.fs = f
	o := &c.o
	f.StringVar(&o.Name, "name", "lab", "cluster name")
	f.IntVar(&o.Standbys, "standbys", 2, "number of hot standbys (0-9)")
	f.StringVar(&o.Commit, "commit", cluster.CommitAsync, "sync or async commit")
	f.IntVar(&o.BasePort, "base-port", cluster.DefaultBasePort, "port of the primary; standbys take the next ones")
	f.StringVar(&o.PGBin, "pg-bin", "", "folder of PostgreSQL server binaries (default: PATH, pg_config, /usr/lib/postgresql/*/bin)")
	f.StringVar(&o.OSUser, "os-user", "", "user that runs the servers when agbench runs as root (default postgres)")
	f.StringArrayVar(&o.Settings, "set", nil, "server setting key=value for every node (repeatable)")
	f.StringVar(&o.RoutingList, "routing-list", "", "the cluster's read-only routing list for its listener and routing comparisons, e.g. \"(('standby1','primary'))\" (default: the standbys, then the primary)")
	f.StringVar(&c.linkLatency, "link-latency", "", "put a link with this latency per round trip (e.g. 0.5ms) between clients and every node and on the replication connections")
	f.StringVar(&c.linkBandwidth, "link-bandwidth", "", "hold each direction of each connection through the links to this many bytes per second (e.g. 10M; puts links in front of the nodes)")
	f.Float64Var(&o.Host.CPUs, "host-cpus", 0, "model each node as a host with this many CPU cores (a control group's quota; needs root)")
	f.StringVar(&c.host.CPUShares, "host-cpu-shares", "auto", "CPU weight of each node's group: auto (in proportion to --host-cpus), kernel (the default weight) or cpu.shares units")
	f.StringVar(&c.host.Memory, "host-memory", "", "model each node as a host with this much memory, page cache included (e.g. 1G; needs root)")
	f.StringVar(&c.host.ReadBPS, "host-read-bps", "", "limit each node's reads on its data's disk to this many bytes per second (e.g. 20M; needs root)")
	f.StringVar(&c.host.WriteBPS, "host-write-bps", "", "limit each node's writes on its data's disk to this many bytes per second (cgroup v1: direct writes only)")
	f.StringVar(&c.host.ReadIOPS, "host-read-iops", "", "limit each node's read operations per second on its data's disk")
	f.StringVar(&c.host.WriteIOPS, "host-write-iops", "", "limit each node's write operations per second on its data's disk (cgroup v1: direct writes only)")
	f.StringVar(&c.listener, "listener", "", "also start `agbench listener` at this address (read-only port +1, metrics +2); --listener alone: 127.0.0.1:6432")
	f.BoolVar(&o.Netns, "netns", false, "put each node in a network namespace of its own, with its own address and node_exporter (needs root)")
	f.StringVar(&o.HA, "ha", "", "patroni: Patroni (with a one-member etcd) runs the nodes and fails over by itself")
	f.IntVar(&o.PatroniTTL, "patroni-ttl", cluster.DefaultPatroniTTL, "with --ha patroni: the leader key's ttl, seconds")
	f.IntVar(&o.PatroniLoopWait, "patroni-loop-wait", cluster.DefaultPatroniLoopWait, "with --ha patroni: Patroni's loop_wait, seconds")
	f.IntVar(&o.PatroniRetryTimeout, "patroni-retry-timeout", cluster.DefaultPatroniRetryTimeout, "with --ha patroni: Patroni's retry_timeout, seconds (ttl ≥ loop_wait + 2 × retry_timeout)")
	f.Lookup("listener").NoOptDefVal = "127.0.0.1:6432"
}

// Options reads the parsed flags into cluster.Create's options, in agbench's home. agbench
// is the agbench binary that serves the links and the listener in the background, asked
// only when the cluster has either; progress gets cluster.Create's lines.
func (c *ClusterCreate) Options(home string, agbench func() (string, error), progress io.Writer) (cluster.CreateOptions, error) {
	o := c.o
	o.Home = home
	o.Progress = progress
	c.host.CPUSharesGiven = c.fs.Changed("host-cpu-shares")
	if err := c.host.Read(&o.Host); err != nil {
		return o, err
	}
	var err error
	if c.linkLatency != "" {
		if o.LinkLatency, err = links.ParseLatency(c.linkLatency); err != nil {
			return o, err
		}
	}
	if c.linkBandwidth != "" {
		if o.LinkBandwidth, err = links.ParseBandwidth("--link-bandwidth", c.linkBandwidth); err != nil {
			return o, err
		}
	}
	if o.RoutingList != "" {
		if _, err := routing.ParseFor(o.RoutingList, cluster.CreatedNodeNames(o.Standbys)); err != nil {
			return o, agerr.BadInputf("--routing-list: %v", err)
		}
	}
	if c.listener != "" {
		if o.Listener, err = cluster.ListenerAt(c.listener); err != nil {
			return o, err
		}
		o.Listener.RoutingList = o.RoutingList
	}
	if o.Listener != nil || o.LinkLatency > 0 || o.LinkBandwidth > 0 {
		if o.Agbench, err = agbench(); err != nil {
			return o, err
		}
	}
	return o, nil
}

// ClusterOptions are the options of a plan's cluster target: its cluster create command
// line (plan.Cluster.CreateArgs, the one a study shows) read by cluster create's flags.
func ClusterOptions(c *plan.Cluster, home string, agbench func() (string, error), progress io.Writer) (cluster.CreateOptions, error) {
	var cc ClusterCreate
	fs := pflag.NewFlagSet("cluster create", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cc.Register(fs)
	args := c.CreateArgs()
	if err := fs.Parse(args[2:]); err != nil {
		return cluster.CreateOptions{}, agerr.BadInputf("agbench cluster create: %v (see agbench cluster create --help)", err)
	}
	return cc.Options(home, agbench, progress)
}
