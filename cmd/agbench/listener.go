package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/spf13/cobra"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/listener"
	"github.com/agbench/agbench/internal/render"
)

func init() { register(newListenerCmd) }

func newListenerCmd(a *app) *cobra.Command {
	var f listener.Options
	c := &cobra.Command{
		Use:   "listener",
		Short: "A PostgreSQL listener that routes read-intent sessions to standbys by a routing list",
		Long: `Run the availability-group listener: a PostgreSQL wire-protocol endpoint that sends
sessions with read intent to a standby chosen by a SQL Server-style routing list, and
every other session to the primary. Any client connects to it as to the server.

Read intent: the startup parameter agbench.intent=read-only (a pgx connection-string
key), options='-c agbench.intent=read-only' (libpq, psql), or the --read-only-listen
port. The routing list is SQL Server's READ_ONLY_ROUTING_LIST: entries in order, one level
of parentheses a load-balanced set, the primary used only when listed; when no entry is
available the client gets SQLSTATE 08004 naming the list. Default: every standby as one
load-balanced set, then the primary. --routing-list NODE=LIST gives the list used while
NODE is the primary (as SQL Server keeps one per replica).

Read-your-writes: a read-intent session may name the WAL position it must see
(options='-c agbench.min_lsn=0/3000148', the pg_current_wal_insert_lsn() read after its
write), or --consistency session makes every read-intent session see all the primary had
flushed when it started. Standbys behind are waited for up to --causal-wait, then skipped
for the next entry of the routing list.

Backends are probed every --probe-interval (role, WAL replayed, lag); roles follow a
failover, and sessions on a node that stopped being primary are ended. Once a session's
startup is over its bytes are forwarded inside the kernel (a BPF sockhash redirects each
socket's data to its peer) when the listener may load BPF programs (root, or CAP_BPF and
CAP_NET_ADMIN), else by the listener itself; --forward chooses. TLS sessions are always
forwarded by the listener. --metrics serves
/metrics (Prometheus), /status (JSON) and /route?intent=read-only (the redirect path:
where a read-intent session belongs, to connect there directly).

Targets: --cluster NAME (a local agbench cluster), or --primary URL and --standby URL
for any cluster; a node is named by NAME=URL or else by the URL's host:port.`,
		Example: `  agbench listener --cluster lab --routing-list "(('standby1','standby2'),'primary')" --max-lag 5s
  psql "host=127.0.0.1 port=6432 options='-c agbench.intent=read-only'" -c 'select pg_is_in_recovery()'
  agbench listener --primary p=postgres://app@db1:5432/app --standby s=postgres://app@db2:5432/app --metrics 127.0.0.1:9187`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := listenerConfig(a, cmd, f)
			if err != nil {
				return err
			}
			if err := f.CheckLogins(cmd.Context()); err != nil {
				return err
			}
			return runListener(cmd.Context(), a, cfg)
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.Cluster, "cluster", "", "local agbench cluster to front")
	fl.StringVar(&f.Primary, "primary", "", "primary's connection string for any existing cluster ([NAME=]URL)")
	fl.StringArrayVar(&f.Standbys, "standby", nil, "a standby's connection string, [NAME=]URL (repeatable)")
	fl.StringVar(&f.Listen, "listen", listener.DefaultListen, "address of the listener")
	fl.StringVar(&f.ReadOnlyListen, "read-only-listen", "", "address on which every session has read intent")
	fl.StringArrayVar(&f.RoutingLists, "routing-list", nil, "routing list, e.g. \"(('standby1','standby2'),'primary')\"; NODE=LIST for one primary's list (repeatable)")
	fl.DurationVar(&f.MaxLag, "max-lag", 0, "skip standbys whose replay lags more (0: no limit)")
	fl.StringVar(&f.Consistency, "consistency", "eventual", "what read-intent sessions must see: eventual (any listed standby), session (a standby that has replayed all the primary had flushed when the session started); a session may say agbench.consistency or agbench.min_lsn itself")
	fl.DurationVar(&f.CausalWait, "causal-wait", listener.DefaultCausalWait, "how long a session that must see a WAL position waits, in all, for standbys to replay it before they are skipped")
	fl.StringVar(&f.Routing, "routing", "on", "on: route read intent by the routing list; off: send it to the primary")
	fl.StringVar(&f.Metrics, "metrics", "", "HTTP address for /metrics, /status and /route")
	fl.StringVar(&f.TLSCert, "tls-cert", "", "PEM certificate: terminate TLS for clients that ask")
	fl.StringVar(&f.TLSKey, "tls-key", "", "PEM private key of --tls-cert")
	fl.BoolVar(&f.TLSRequire, "tls-require", false, "refuse sessions without TLS")
	fl.DurationVar(&f.ProbeInterval, "probe-interval", listener.DefaultProbeInterval, "how often each backend is probed")
	fl.StringVar(&f.Patroni, "patroni", "", "Patroni REST API URLs, comma-separated, one per node in the order of --primary and --standby: roles come from Patroni (GET /patroni), not from the servers (a --cluster under Patroni has them already)")
	fl.StringVar(&f.Forward, "forward", "auto", "how sessions' bytes move after startup: kernel (a BPF sockhash; needs root or CAP_BPF+CAP_NET_ADMIN), user (the listener copies them), auto (kernel when it can)")
	fl.DurationVar(&f.StartupTimeout, "startup-timeout", listener.DefaultStartupTimeout, "how long a client may take over its startup phase")
	return c
}

// listenerConfig reads the flags into a configuration; a --cluster alone is loaded first.
func listenerConfig(a *app, cmd *cobra.Command, o listener.Options) (listener.Config, error) {
	var topo *cluster.Topology
	if o.Cluster != "" && o.Primary == "" && len(o.Standbys) == 0 {
		var err error
		if topo, err = loadCluster(a, o.Cluster); err != nil {
			return listener.Config{}, err
		}
	}
	o.Given = cmd.Flags().Changed
	return o.Config(topo)
}

// runListener serves until the command's context ends (Ctrl-C), printing events as lines.
func runListener(ctx context.Context, a *app, cfg listener.Config) error {
	var mu sync.Mutex
	cfg.OnEvent = func(e listener.Event) {
		mu.Lock()
		fmt.Fprintf(a.stderr, "%s\n", e)
		mu.Unlock()
	}
	l, err := listener.Start(ctx, cfg)
	if err != nil {
		return err
	}
	mu.Lock()
	render.ListenerBanner(a.stdout, l.State())
	mu.Unlock()
	<-ctx.Done()
	l.Close()
	fmt.Fprintln(a.stdout, "agbench listener: stopped")
	return nil
}
