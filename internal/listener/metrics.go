package listener

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agbench/agbench/internal/routing"
)

// metrics counts what the listener did. Sessions are counted per session, never per
// message, so a mutex is cheap enough.
type metrics struct {
	mu       sync.Mutex
	sessions map[[2]string]uint64 // intent, node
	active   map[string]int64     // node
	failures map[[2]string]uint64 // reason, intent
	bytes    map[[2]string]uint64 // node, direction
	cancels  map[string]uint64    // result
	ended    map[string]uint64    // node: sessions ended because it stopped being the primary
	promoEnd map[string]uint64    // node: read-intent sessions ended because it stopped being a standby
	forward  map[string]uint64    // forwarding mode of sessions past startup
	retries  map[[2]string]uint64 // node, reason
	// causal routing
	causal        map[[2]string]uint64 // node, "immediate" or "waited"
	causalWaits   map[[2]string]uint64 // node, result (caught_up, timed_out, error)
	causalWaitSec map[string]float64   // node
	causalWaitLe  map[string][]uint64  // node: waits up to each of causalWaitBuckets (cumulative)
	fallbacks     map[string]uint64    // node skipped as behind
}

func newMetrics() *metrics {
	return &metrics{sessions: map[[2]string]uint64{}, active: map[string]int64{}, failures: map[[2]string]uint64{},
		bytes: map[[2]string]uint64{}, cancels: map[string]uint64{}, ended: map[string]uint64{}, promoEnd: map[string]uint64{}, forward: map[string]uint64{},
		retries: map[[2]string]uint64{}, causal: map[[2]string]uint64{}, causalWaits: map[[2]string]uint64{},
		causalWaitSec: map[string]float64{}, causalWaitLe: map[string][]uint64{}, fallbacks: map[string]uint64{}}
}

func (m *metrics) sessionStarted(i routing.Intent, node string) {
	m.mu.Lock()
	m.sessions[[2]string{i.String(), node}]++
	m.active[node]++
	m.mu.Unlock()
}

func (m *metrics) sessionEnded(node string) {
	m.mu.Lock()
	m.active[node]--
	m.mu.Unlock()
}

func (m *metrics) addFailure(f Failure, intent string) {
	m.mu.Lock()
	m.failures[[2]string{f.String(), intent}]++
	m.mu.Unlock()
}

func (m *metrics) addRetry(node, reason string) {
	m.mu.Lock()
	m.retries[[2]string{node, reason}]++
	m.mu.Unlock()
}

func (m *metrics) addCausalSession(node string, waited bool) {
	how := "immediate"
	if waited {
		how = "waited"
	}
	m.mu.Lock()
	m.causal[[2]string{node, how}]++
	m.mu.Unlock()
}

func (m *metrics) addCausalWait(node, result string, d time.Duration) {
	m.mu.Lock()
	m.causalWaits[[2]string{node, result}]++
	m.causalWaitSec[node] += d.Seconds()
	le := m.causalWaitLe[node]
	if le == nil {
		le = make([]uint64, len(causalWaitBuckets))
		m.causalWaitLe[node] = le
	}
	for i, b := range causalWaitBuckets {
		if d.Seconds() <= b {
			le[i]++
		}
	}
	m.mu.Unlock()
}

// causalWaitBuckets are the upper bounds, in seconds, of the causal wait histogram.
var causalWaitBuckets = []float64{0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1}

func (m *metrics) addCausalFallback(node string) {
	m.mu.Lock()
	m.fallbacks[node]++
	m.mu.Unlock()
}

func (m *metrics) addBytes(node, dir string, n int64) {
	m.mu.Lock()
	m.bytes[[2]string{node, dir}] += uint64(max(n, 0))
	m.mu.Unlock()
}

func (m *metrics) addForwarding(mode string) {
	m.mu.Lock()
	m.forward[mode]++
	m.mu.Unlock()
}

func (m *metrics) addCancel(result string) {
	m.mu.Lock()
	m.cancels[result]++
	m.mu.Unlock()
}

func (m *metrics) addDemotionEnded(node string, n int) {
	m.mu.Lock()
	m.ended[node] += uint64(n)
	m.mu.Unlock()
}

func (m *metrics) addPromotionEnded(node string, n int) {
	m.mu.Lock()
	m.promoEnd[node] += uint64(n)
	m.mu.Unlock()
}

// Counts is a snapshot of the listener's counters, for tests and reports.
type Counts struct {
	// Sessions counts routed sessions by "intent/node".
	Sessions map[string]uint64
	// Failures counts sessions that were not routed or did not start, by "reason/intent".
	Failures map[string]uint64
	// Cancels counts cancel requests by result: forwarded, unknown, failed.
	Cancels map[string]uint64
	// Forwarded counts sessions past their startup phase by how they were forwarded:
	// "kernel", or "user" when the kernel forwarder would not take them.
	Forwarded map[string]uint64
	// Retries counts new sessions moved on to the next candidate because a node refused
	// them at startup, by "node/reason" (connect_failed, cannot_connect_now,
	// too_many_connections).
	Retries map[string]uint64
	// Conflicts counts, by node, the times it was found writable while another node (or
	// none) was taken for the primary.
	Conflicts map[string]uint64
	// Causal counts sessions routed with a WAL position to see (agbench.min_lsn or session
	// consistency), by "node/immediate" (the node had replayed it) or "node/waited".
	Causal map[string]uint64
	// CausalWaits counts waits for a standby to replay a session's position, by
	// "node/result" (caught_up, timed_out, error); CausalWaitSeconds sums them by node.
	CausalWaits       map[string]uint64
	CausalWaitSeconds map[string]float64
	// Fallbacks counts, by node, the times a standby behind a session's position was
	// skipped for the next candidate.
	Fallbacks map[string]uint64
}

// Counts returns the listener's counters.
func (l *Listener) Counts() Counts {
	m := l.metrics
	m.mu.Lock()
	defer m.mu.Unlock()
	c := Counts{Sessions: map[string]uint64{}, Failures: map[string]uint64{}, Cancels: map[string]uint64{},
		Forwarded: map[string]uint64{}, Retries: map[string]uint64{}, Conflicts: l.health.conflictCounts(),
		Causal: map[string]uint64{}, CausalWaits: map[string]uint64{}, CausalWaitSeconds: map[string]float64{}, Fallbacks: map[string]uint64{}}
	for k, v := range m.causal {
		c.Causal[k[0]+"/"+k[1]] = v
	}
	for k, v := range m.causalWaits {
		c.CausalWaits[k[0]+"/"+k[1]] = v
	}
	for k, v := range m.causalWaitSec {
		c.CausalWaitSeconds[k] = v
	}
	for k, v := range m.fallbacks {
		c.Fallbacks[k] = v
	}
	for k, v := range m.retries {
		c.Retries[k[0]+"/"+k[1]] = v
	}
	for k, v := range m.forward {
		c.Forwarded[k] = v
	}
	for k, v := range m.sessions {
		c.Sessions[k[0]+"/"+k[1]] = v
	}
	for k, v := range m.failures {
		c.Failures[k[0]+"/"+k[1]] = v
	}
	for k, v := range m.cancels {
		c.Cancels[k] = v
	}
	return c
}

// writeProm writes the metrics in Prometheus' text exposition format.
func (l *Listener) writeProm(w io.Writer) {
	m := l.metrics
	var b strings.Builder
	m.mu.Lock()
	m.writeSessions(&b)
	m.writeCausal(&b)
	m.mu.Unlock()
	l.writeBackends(&b)
	_, _ = io.WriteString(w, b.String())
}

// writeSessions writes the counters of sessions, bytes, cancels and retries; m.mu is held.
func (m *metrics) writeSessions(b *strings.Builder) {
	family(b, "agbench_listener_sessions_total", "counter", "Sessions routed, by declared intent and target node.")
	for _, k := range sortedKeys2(m.sessions) {
		fmt.Fprintf(b, "agbench_listener_sessions_total{intent=%q,node=%q} %d\n", k[0], k[1], m.sessions[k])
	}
	family(b, "agbench_listener_sessions_active", "gauge", "Sessions open now, by target node.")
	for _, k := range sortedKeys(m.active) {
		fmt.Fprintf(b, "agbench_listener_sessions_active{node=%q} %d\n", k, m.active[k])
	}
	family(b, "agbench_listener_session_failures_total", "counter", "Sessions refused or failed before forwarding, by reason (no_target is a routing refusal) and intent.")
	for _, k := range sortedKeys2(m.failures) {
		fmt.Fprintf(b, "agbench_listener_session_failures_total{reason=%q,intent=%q} %d\n", k[0], k[1], m.failures[k])
	}
	family(b, "agbench_listener_bytes_total", "counter", "Bytes forwarded, by node and direction, counted when each session ends.")
	for _, k := range sortedKeys2(m.bytes) {
		fmt.Fprintf(b, "agbench_listener_bytes_total{node=%q,direction=%q} %d\n", k[0], k[1], m.bytes[k])
	}
	family(b, "agbench_listener_cancel_requests_total", "counter", "Cancel requests, by result.")
	for _, k := range sortedKeys(m.cancels) {
		fmt.Fprintf(b, "agbench_listener_cancel_requests_total{result=%q} %d\n", k, m.cancels[k])
	}
	family(b, "agbench_listener_demotion_ended_sessions_total", "counter", "Sessions ended because their node stopped being the primary.")
	for _, k := range sortedKeys(m.ended) {
		fmt.Fprintf(b, "agbench_listener_demotion_ended_sessions_total{node=%q} %d\n", k, m.ended[k])
	}
	family(b, "agbench_listener_promotion_ended_sessions_total", "counter", "Read-intent sessions ended because the standby they were routed to stopped being a standby (promoted), so that their clients are routed again.")
	for _, k := range sortedKeys(m.promoEnd) {
		fmt.Fprintf(b, "agbench_listener_promotion_ended_sessions_total{node=%q} %d\n", k, m.promoEnd[k])
	}
	family(b, "agbench_listener_forwarded_sessions_total", "counter", "Sessions past their startup phase, by how their bytes were forwarded (kernel: a BPF sockhash; user: the listener's copy loops).")
	for _, k := range sortedKeys(m.forward) {
		fmt.Fprintf(b, "agbench_listener_forwarded_sessions_total{mode=%q} %d\n", k, m.forward[k])
	}
	family(b, "agbench_listener_startup_retries_total", "counter", "New sessions moved on to the next candidate because the node refused them at startup, before any byte reached the client, by reason: connect_failed (no connection, or no answer), cannot_connect_now (57P03: starting up, shutting down), too_many_connections (53300).")
	for _, k := range sortedKeys2(m.retries) {
		fmt.Fprintf(b, "agbench_listener_startup_retries_total{node=%q,reason=%q} %d\n", k[0], k[1], m.retries[k])
	}
}

// writeCausal writes the counters and waits of causal routing; m.mu is held.
func (m *metrics) writeCausal(b *strings.Builder) {
	family(b, "agbench_listener_causal_sessions_total", "counter", "Read-intent sessions routed with a WAL position to see (agbench.min_lsn or session consistency), by node and how: immediate (it had replayed it), waited.")
	for _, k := range sortedKeys2(m.causal) {
		fmt.Fprintf(b, "agbench_listener_causal_sessions_total{node=%q,how=%q} %d\n", k[0], k[1], m.causal[k])
	}
	family(b, "agbench_listener_causal_waits_total", "counter", "Waits for a standby to replay a session's WAL position, by node and result (caught_up, timed_out, error).")
	for _, k := range sortedKeys2(m.causalWaits) {
		fmt.Fprintf(b, "agbench_listener_causal_waits_total{node=%q,result=%q} %d\n", k[0], k[1], m.causalWaits[k])
	}
	family(b, "agbench_listener_causal_wait_seconds", "histogram", "How long sessions waited for a standby to replay their WAL position, by node.")
	for _, k := range sortedKeys(m.causalWaitSec) {
		var n uint64
		for r := range m.causalWaits {
			if r[0] == k {
				n += m.causalWaits[r]
			}
		}
		for i, le := range causalWaitBuckets {
			fmt.Fprintf(b, "agbench_listener_causal_wait_seconds_bucket{node=%q,le=\"%g\"} %d\n", k, le, m.causalWaitLe[k][i])
		}
		fmt.Fprintf(b, "agbench_listener_causal_wait_seconds_bucket{node=%q,le=\"+Inf\"} %d\n", k, n)
		fmt.Fprintf(b, "agbench_listener_causal_wait_seconds_sum{node=%q} %g\n", k, m.causalWaitSec[k])
		fmt.Fprintf(b, "agbench_listener_causal_wait_seconds_count{node=%q} %d\n", k, n)
	}
	family(b, "agbench_listener_causal_fallbacks_total", "counter", "Times a standby behind a session's WAL position was skipped for the routing list's next candidate.")
	for _, k := range sortedKeys(m.fallbacks) {
		fmt.Fprintf(b, "agbench_listener_causal_fallbacks_total{node=%q} %d\n", k, m.fallbacks[k])
	}
}

// writeBackends writes the conflicts and each backend's health, as the prober knows them.
func (l *Listener) writeBackends(b *strings.Builder) {
	conflicts := l.health.conflictCounts()
	family(b, "agbench_listener_primary_conflicts_total", "counter", "Times the node was found writable while another node was taken for the newest primary (or none could be told newest), by the node not taken.")
	for _, k := range sortedKeys(conflicts) {
		fmt.Fprintf(b, "agbench_listener_primary_conflicts_total{node=%q} %d\n", k, conflicts[k])
	}
	st := l.health.status()
	family(b, "agbench_listener_backend_up", "gauge", "1 when the last health probes of the node succeeded.")
	for _, n := range st {
		fmt.Fprintf(b, "agbench_listener_backend_up{node=%q} %d\n", n.Name, b2i(n.Up))
	}
	family(b, "agbench_listener_backend_primary", "gauge", "1 for the node the listener takes for the primary.")
	for _, n := range st {
		fmt.Fprintf(b, "agbench_listener_backend_primary{node=%q} %d\n", n.Name, b2i(n.Role == routing.RolePrimary.String()))
	}
	family(b, "agbench_listener_backend_stale_primary", "gauge", "1 for a writable node that is not taken for the primary: it takes no session.")
	for _, n := range st {
		fmt.Fprintf(b, "agbench_listener_backend_stale_primary{node=%q} %d\n", n.Name, b2i(n.Role == routing.RoleStalePrimary.String()))
	}
	family(b, "agbench_listener_backend_refusing", "gauge", "1 for a node out of routing until its next good probe because it refused a session at startup.")
	for _, n := range st {
		fmt.Fprintf(b, "agbench_listener_backend_refusing{node=%q} %d\n", n.Name, b2i(n.Refusing != ""))
	}
	family(b, "agbench_listener_backend_timeline", "gauge", "The timeline a writable node writes on (absent for standbys and when the probe login may not read it).")
	for _, n := range st {
		if n.Timeline != nil {
			fmt.Fprintf(b, "agbench_listener_backend_timeline{node=%q} %d\n", n.Name, *n.Timeline)
		}
	}
	family(b, "agbench_listener_backend_lag_seconds", "gauge", "How long the standby's replay has been behind the primary (absent where not measured: the primary, nodes down, a standby before the primary's WAL positions are known; /status says why).")
	for _, n := range st {
		if n.LagSeconds != nil {
			fmt.Fprintf(b, "agbench_listener_backend_lag_seconds{node=%q} %g\n", n.Name, *n.LagSeconds)
		}
	}
}

func family(b *strings.Builder, name, typ, help string) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

func sortedKeys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

func sortedKeys2[V any](m map[[2]string]V) [][2]string {
	k := make([][2]string, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Slice(k, func(i, j int) bool { return k[i][0]+"\x00"+k[i][1] < k[j][0]+"\x00"+k[j][1] })
	return k
}

// sessionRedirected counts a redirect answer as a session of that intent and node
// (intent label "read-only-redirect"), since the client then connects there directly.
func (m *metrics) sessionRedirected(i routing.Intent, node string) {
	m.mu.Lock()
	m.sessions[[2]string{i.String() + "-redirect", node}]++
	m.mu.Unlock()
}

func (m *metrics) snapshotActive(node string) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.active[node]
}
