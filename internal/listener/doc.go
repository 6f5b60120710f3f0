// Package listener owns agbench's PostgreSQL wire-protocol listener: the availability
// group listener that PostgreSQL lacks. It accepts client sessions, reads only the
// startup phase (SSLRequest, GSSENCRequest, CancelRequest, StartupMessage, parsed with
// pgproto3), learns the session's intent, chooses a backend with the routing package,
// forwards the startup message and then moves bytes both ways until either side closes,
// with no per-message parsing after the first ReadyForQuery and no buffering of results.
//
// Forwarding after startup happens in the kernel when the listener may load BPF programs
// (Linux, root or CAP_BPF and CAP_NET_ADMIN; Config.Forward): both sockets of a session go
// into a BPF sockhash, and an SK_SKB verdict program (kernel_linux.go) redirects what
// arrives on one to the other's send side, so a query and its answer never wake the
// listener. The session then leaves Go's poller: one goroutine waits in poll on its own
// descriptors of both sockets for each side's end of stream (and forwards what the kernel
// passes up while a session is taken out of the maps). The client's end is passed to the
// backend, and the backend's end ends the session, each only once the kernel has sent
// everything it took before it (TCP's own byte counters), so a Terminate or a FATAL error
// is never cut off; a client reset ends the session at once. Backpressure is
// TCP's: a client that stops reading stops the backend. TLS sessions, and any session the
// sockhash will not take, are forwarded by the copy loops (raw non-blocking reads and
// writes between the two sockets, one 32 KiB buffer each way).
//
// Read intent is declared by a startup parameter agbench.intent=read-only (pgx sends
// unknown connection-string keys as startup parameters), the same inside options
// (options='-c agbench.intent=read-only', as libpq and psql send it), or by connecting
// to the read-only port. The listener removes its parameter before forwarding. Sessions
// without intent go to the primary.
//
// Health: every backend is probed on an interval (pg_is_in_recovery, WAL position
// written or replayed, replay paused, and on a writable node its timeline, read from
// pg_walfile_name(pg_current_wal_lsn()), which any login may call). Two failed probes in a
// row take a node out of routing; a good probe brings it back. Standby lag is the time
// since the primary was first seen past the standby's replay position. Where it was not
// measured it is absent, never 0: the primary and nodes down have none, nor has a standby
// while no position of a primary is known (none seen since start or since the last
// primary stopped being one) or while it is behind every position seen; such a standby
// is skipped under Config.MaxLag, saying why its lag is unknown. After a promotion
// the new primary is found within a probe interval or two; sessions that went to the old
// primary while it was primary are ended, not left writing into a node that is no longer
// primary, and so are the read-intent sessions routed to a standby that stopped being one
// (promoted), so that their clients reconnect and are routed by the new roles; a session
// routed by the old roles while the change settled is routed again. With two writable nodes (a split brain: the old primary restarted without
// standby.signal), the one on the newer timeline is the primary, also for a listener
// that has just started; without timelines, the one this listener saw promoted last, then
// the one that was primary before; else none, and writes are refused (primary.go). The
// other is a stale primary: it takes no session, stays stale when the primary goes down,
// and is counted and reported once as a conflict. A down node is shown down, never primary.
//
// Retry at startup: the listener reads the backend's first answer to the StartupMessage
// before passing anything to the client. When the backend cannot be reached, or refuses
// the session with 57P03 (starting up, shutting down) or 53300 (too many connections),
// the node is kept out of routing until its next good probe and the session goes to the
// next candidate by the routing list's rules; with none left, the client gets the last
// backend's own error (backend.go). Anything else, an authentication request included,
// commits the session to that node, so TLS, SCRAM and the kernel forwarder never see a
// retried session.
//
// Causal routing (causal.go): a read-intent session that names a WAL position
// (agbench.min_lsn) or takes session consistency (Config.Consistency, agbench.consistency)
// goes only to a standby that has replayed it. Each node's position is known from its
// probes and, while sessions wait on it, read every millisecond by one poller per node on
// its own connection; a standby still behind after Config.CausalWait (per session) is
// skipped for that session, and the routing list's next candidate is tried. A position
// beyond the primary's insert position is refused at once. RouteCausal and /route's
// min_lsn and consistency do the same for the redirect path (ResolveRequest).
//
// CancelRequest: the listener notes each session's BackendKeyData (it reads the
// backend's messages only until ReadyForQuery) and sends a client's CancelRequest to the
// backend of the session it names. TLS: with Config.TLS the listener terminates TLS for
// clients that ask (and with RequireTLS refuses those that do not); without it, it
// declines SSLRequest as a server without ssl does. Authentication (SCRAM, md5, trust)
// passes through untouched: the listener never sees a password.
//
// # In-process API
//
//	l, err := listener.Start(ctx, listener.Config{
//		Listen: "127.0.0.1:0", ReadOnlyListen: "127.0.0.1:0", Metrics: "127.0.0.1:0",
//		Backends: []listener.Backend{{Name: "primary", Addr: "127.0.0.1:5432", ProbeConnString: "..."}, ...},
//		RoutingList: "(('standby1','standby2'),'primary')", Routing: true, MaxLag: 5 * time.Second,
//	})
//	defer l.Close()          // idempotent; drains sessions for DrainTimeout, then cuts them
//	l.Addr(), l.ReadOnlyAddr(), l.MetricsAddr(), l.Status(), l.Counts()
//
// listener.ConfigFromTopology(topo) builds the Config of a local agbench cluster.
// Config.Routing false sends read intent to the primary (routing off), so that a
// benchmark can run one listener per variant of --compare routing=off,on.
//
// # Redirect path
//
// Routing can cost one round trip per session instead of a proxy hop per query, as SQL
// Server's listener redirects a client at login: GET /route?intent=read-only on the
// metrics address answers {"node":"standby1","addr":"127.0.0.1:5433"} (503 with the
// reason when the list has no available node). Clients use Resolve(ctx, metricsAddr,
// listener.ReadOnly) for host:port, or Redirect to point a pgconn.Config there, connect
// directly, and ask again after a connection error. /status answers every node's health
// as JSON, with the one primary; /metrics is in Prometheus text format (sessions by
// intent and node, failures and refusals by reason, startup retries by node and reason,
// primary conflicts by stale node, bytes forwarded, sessions by forwarding mode, cancels,
// backend up/primary/stale primary/refusing/timeline/lag); /status also says how
// sessions are forwarded.
//
// The package never logs: Config.OnEvent receives role changes, nodes going down and
// back, primary conflicts, startup retries, refusals and ended sessions. It imports routing, cluster (for the topology
// type only) and target (to read a node's [NAME=]URL in Options); it must not import the
// runner, workloads, measure or report.
//
// What it knows of each backend and what it shows when it starts are records of
// internal/status (NodeStatus, State), which the renderer prints.
//
// Imports from agbench: only internal/agerr, internal/cluster, internal/routing, internal/status, internal/target.
package listener
