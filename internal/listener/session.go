package listener

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/agbench/agbench/internal/routing"
)

// maxStartupBackendMsg bounds one backend message before ReadyForQuery (authentication
// requests, parameter status, notices), the only backend messages the listener reads.
const maxStartupBackendMsg = 1 << 20

// session is one client session after routing.
type session struct {
	client  net.Conn
	backend net.Conn
	// br reads the backend; it holds the backend's first message, already read to see
	// whether the backend refused the session.
	br     *bufio.Reader
	node   string
	intent routing.Intent
	// primary is true when the session went to the node while it was the primary.
	primary bool
	key     string
	once    sync.Once
	// kernel is set when the kernel forwards the session (after its startup phase);
	// detached once it has its own descriptors and the net.Conns are closed.
	kernel   atomic.Pointer[kernelSession]
	detached atomic.Bool
	// killed is set once kill has cut the session.
	killed atomic.Bool
}

// kill cuts the session's connections; the forwarding goroutines then end.
func (s *session) kill() {
	s.once.Do(func() {
		s.killed.Store(true)
		_ = s.client.Close()
		_ = s.backend.Close()
		if ks := s.kernel.Load(); ks != nil {
			ks.shutdown()
		}
	})
}

// handle serves one client connection from accept to close.
func (l *Listener) handle(c net.Conn, readOnlyPort bool) {
	defer c.Close()
	tuneTCP(c)
	_ = c.SetDeadline(time.Now().Add(l.cfg.StartupTimeout))
	conn, sm, fail := l.startupPhase(c)
	start := time.Now()
	if fail != FailNone {
		l.metrics.addFailure(fail, "")
		return
	}
	if sm == nil { // a cancel request, served
		return
	}
	intent, err := takeIntent(sm.Parameters, readOnlyPort)
	if err != nil {
		l.metrics.addFailure(FailBadIntent, "")
		sendError(conn, codeInvalidParamValue, err.Error(), "")
		return
	}
	need, err := takeCausal(sm.Parameters, l.cfg.Consistency, start)
	if err != nil {
		var bp *BadParamError
		errors.As(err, &bp)
		l.metrics.addFailure(FailBadCausalParam, intent.String())
		sendError(conn, bp.Code, "agbench listener: "+err.Error(), "")
		return
	}
	startup, err := sm.Encode(nil)
	if err != nil {
		l.metrics.addFailure(FailBadStartup, "")
		sendError(conn, codeProtocolViolation, "agbench listener: "+err.Error(), "")
		return
	}
	s, fail, err := l.openSession(conn, intent, need, startup)
	switch {
	case fail == FailShuttingDown:
		l.metrics.addFailure(fail, intent.String())
		sendError(conn, codeCannotConnectNow, "agbench listener is shutting down", "")
		return
	case fail != FailNone:
		l.metrics.addFailure(fail, intent.String())
		sendError(conn, codeCannotConnectNow, "agbench listener: "+err.Error(), "Connect again: the session is routed by the new roles.")
		return
	case s == nil:
		return
	}
	defer s.backend.Close()
	defer l.unregister(s)
	_ = c.SetDeadline(time.Time{})
	l.metrics.sessionStarted(intent, s.node)
	defer l.metrics.sessionEnded(s.node)
	l.forward(s)
}

// maxRoleReroutes bounds how often a new session is routed again because its node
// changed role while it was being routed.
const maxRoleReroutes = 2

// openSession opens the session's backend and registers the session, so that a role
// change ends it. A session routed by the roles before a change and registered after the
// change's sessions were ended is routed again (nothing has reached its client yet). It
// returns nil when the session ends here: refused (answered already), or with fail set
// and err saying why the client must be told.
func (l *Listener) openSession(conn net.Conn, intent routing.Intent, need causalNeed, startup []byte) (*session, Failure, error) {
	for reroutes := 0; ; reroutes++ {
		b, fail, err := l.openBackend(intent, need, startup)
		if err != nil || b.refusal != nil {
			l.refuseSession(conn, intent, b, fail, err)
			return nil, FailNone, nil
		}
		s := &session{client: conn, backend: b.conn, br: b.br, node: b.d.Node, intent: intent, primary: b.d.Primary}
		if !l.register(s) {
			_ = b.conn.Close()
			return nil, FailShuttingDown, nil
		}
		if l.roleHolds(s) {
			return s, FailNone, nil
		}
		l.unregister(s)
		_ = b.conn.Close()
		if s.killed.Load() { // ended with the sessions of the role change: the client is cut
			return nil, FailNone, nil
		}
		was := "a standby"
		if s.primary {
			was = "the primary"
		}
		if reroutes == maxRoleReroutes {
			return nil, FailRoleChanged, fmt.Errorf("%s stopped being %s while a %s session was routed to it", s.node, was, intent)
		}
		l.emit(Event{Kind: "retry", Node: s.node, Msg: fmt.Sprintf("stopped being %s while a %s session was routed to it; routing the session again", was, intent)})
	}
}

// roleHolds reports whether the session's node still has, in the published view, the
// role the session was routed to it in: the primary, or a standby.
func (l *Listener) roleHolds(s *session) bool {
	for _, n := range l.health.routingNodes() {
		if n.Name == s.node {
			if s.primary {
				return n.Role == routing.RolePrimary
			}
			return n.Role == routing.RoleStandby
		}
	}
	return false
}

// refuseSession answers a client whose session no node took: with the last backend's own
// refusal when every candidate refused it at startup, else with the listener's.
func (l *Listener) refuseSession(conn net.Conn, intent routing.Intent, b *backendConn, fail Failure, err error) {
	if err == nil { // b.refusal is set
		l.metrics.addFailure(FailBackendRefused, intent.String())
		l.emit(Event{Kind: "refused", Node: b.d.Node, Msg: "no node left to retry on; passing on " + b.why})
		_ = conn.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = conn.Write(b.refusal)
		return
	}
	l.metrics.addFailure(fail, intent.String())
	if fail == FailShuttingDown {
		sendError(conn, codeCannotConnectNow, "agbench listener is shutting down", "")
		return
	}
	var nt *routing.NoTargetError
	var ce *causalError
	hint := "agbench listener: see its /status or metrics for each node's health"
	switch {
	case fail == FailCausalNoTarget:
		hint = "No listed standby replayed what the session must see within --causal-wait: raise it, or list the primary to let it serve read intent."
	case errors.As(err, &ce) && ce.fail == FailCausalFuture:
		hint = "Give an LSN the primary has written: pg_current_wal_insert_lsn() after the write."
	case errors.As(err, &nt) && intent == routing.ReadOnly:
		hint = "Bring a listed node back, raise --max-lag (a standby whose lag is unknown takes sessions once the primary is seen past its replay position), or list the primary to let it serve read intent."
	}
	l.emit(Event{Kind: "refused", Msg: err.Error()})
	sendError(conn, codeRejected, "agbench listener: "+err.Error(), hint)
}

// startupPhase answers SSLRequest and GSSENCRequest, serves a CancelRequest, and returns
// the client's StartupMessage with the connection to use from then on (TLS or not).
// A nil message with FailNone means a cancel request was served.
func (l *Listener) startupPhase(c net.Conn) (net.Conn, *pgproto3.StartupMessage, Failure) {
	conn := c
	encrypted := false
	for {
		msg, err := readStartup(conn)
		if err != nil {
			return conn, nil, l.startupFailure(conn, err)
		}
		switch m := msg.(type) {
		case *pgproto3.SSLRequest:
			if encrypted {
				sendError(conn, codeProtocolViolation, "agbench listener: SSLRequest inside TLS", "")
				return conn, nil, FailBadStartup
			}
			if l.cfg.TLS == nil {
				if _, err := conn.Write([]byte{'N'}); err != nil {
					return conn, nil, FailClientGone
				}
				continue
			}
			if _, err := conn.Write([]byte{'S'}); err != nil {
				return conn, nil, FailClientGone
			}
			tc := tls.Server(c, l.cfg.TLS)
			if err := tc.HandshakeContext(context.Background()); err != nil {
				return conn, nil, FailTLSHandshake
			}
			conn, encrypted = tc, true
		case *pgproto3.GSSEncRequest:
			if _, err := conn.Write([]byte{'N'}); err != nil {
				return conn, nil, FailClientGone
			}
		case *pgproto3.CancelRequest:
			l.cancel(m)
			return conn, nil, FailNone
		case *pgproto3.StartupMessage:
			if l.cfg.RequireTLS && !encrypted {
				sendError(conn, codeInvalidAuthSpec, "agbench listener requires TLS", "Connect with sslmode=require.")
				return conn, nil, FailTLSRequired
			}
			return conn, m, FailNone
		default:
			sendError(conn, codeProtocolViolation, fmt.Sprintf("agbench listener: unexpected startup message %T", msg), "")
			return conn, nil, FailBadStartup
		}
	}
}

func (l *Listener) startupFailure(conn net.Conn, err error) Failure {
	var pe *ProtocolError
	switch {
	case errors.As(err, &pe):
		sendError(conn, codeProtocolViolation, "agbench listener: "+pe.Error(), "")
		return FailBadStartup
	case errors.Is(err, os.ErrDeadlineExceeded):
		sendError(conn, codeProtocolViolation, "agbench listener: startup timeout", "")
		return FailStartupTimeout
	}
	return FailClientGone
}

func (l *Listener) register(s *session) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.sessions[s] = struct{}{}
	return true
}

func (l *Listener) unregister(s *session) {
	l.mu.Lock()
	delete(l.sessions, s)
	if s.key != "" && l.keys[s.key] == s {
		delete(l.keys, s.key)
	}
	l.mu.Unlock()
}

// forward moves bytes both ways until either side closes. Backend messages are read one
// by one only until the first ReadyForQuery, to learn the cancel key; after that the kernel
// forwards the session when it can (kernelForwarder), else both directions are plain
// copies (copyConn). In the kernel's case the session is then detached from Go's poller
// and its watch (kernelSession.watch) sees each side's end of stream.
func (l *Listener) forward(s *session) {
	var upMoved, downMoved atomic.Int64
	up := make(chan struct{})
	go func() {
		defer close(up)
		n, err := copyConn(s.backend, s.client, &upMoved)
		if s.detached.Load() {
			return // the session's own watch has it now
		}
		if s.kernel.Load() == nil {
			l.metrics.addBytes(s.node, "to_backend", n)
		}
		if err == nil {
			if ks := s.kernel.Load(); ks != nil {
				ks.drained(true, true, kernelDrainStall)
			}
			if cw, ok := s.backend.(interface{ CloseWrite() error }); ok {
				_ = cw.CloseWrite()
				return
			}
		}
		s.kill()
	}()
	err := l.relayStartup(s, &upMoved, &downMoved)
	if ks := s.kernel.Load(); ks != nil {
		// The kernel has the session: its own watch sees the ends (level-triggered, on its
		// own descriptors). Without them (a failed startup, no descriptors left) it ends.
		if err == nil && l.detach(s, ks) {
			<-up
			if toBackend, toClient, ok := ks.watch(); ok {
				l.metrics.addBytes(s.node, "to_backend", toBackend)
				l.metrics.addBytes(s.node, "to_client", toClient)
			}
		}
		s.kill()
		<-up
		ks.end()
	} else {
		if err == nil {
			_, _ = copyConn(s.client, s.backend, &downMoved)
		}
		l.metrics.addBytes(s.node, "to_client", downMoved.Load())
		s.kill()
		<-up
	}
	if err != nil && !errors.Is(err, io.EOF) {
		l.metrics.addFailure(FailBackendStartup, s.intent.String())
	}
}

// detach takes a kernel-forwarded session off Go's poller (see kernelSession.detach):
// the net.Conns are closed, which also ends the client copy loop.
func (l *Listener) detach(s *session, ks *kernelSession) bool {
	if ks.detach() != nil {
		return false
	}
	s.detached.Store(true)
	_ = s.client.Close()
	_ = s.backend.Close()
	return true
}

// kernelDrainStall bounds the wait, at a session's end, for the kernel to pass on what it
// still holds of that session, while the receiving side takes nothing.
const kernelDrainStall = 30 * time.Second

// toKernel hands the session to the kernel forwarder, if there is one and the session is
// plain TCP. It is called between the backend's ReadyForQuery and the client's.
func (l *Listener) toKernel(s *session, up, down *atomic.Int64) {
	if l.kfwd == nil {
		return
	}
	ks, err := l.kfwd.start(s.client, s.backend, up, down)
	if err != nil {
		l.metrics.addForwarding("user")
		return
	}
	ks.mark()
	s.kernel.Store(ks)
	l.metrics.addForwarding("kernel")
}

// relayStartup passes the backend's messages to the client until ReadyForQuery, noting
// BackendKeyData for cancel requests; then it passes on what it has read ahead. What it
// writes to the client is counted in down.
func (l *Listener) relayStartup(s *session, up, down *atomic.Int64) error {
	br := s.br
	var out []byte
	flush := func() error {
		if len(out) == 0 {
			return nil
		}
		n, err := s.client.Write(out)
		down.Add(int64(n))
		out = out[:0]
		return err
	}
	for {
		hdr, err := br.Peek(5)
		if err != nil {
			_ = flush()
			if errors.Is(err, io.EOF) && len(hdr) == 0 {
				return io.ErrUnexpectedEOF
			}
			return err
		}
		typ, size := hdr[0], int(int32(binary.BigEndian.Uint32(hdr[1:])))
		if size < 4 || size > maxStartupBackendMsg {
			_ = flush()
			return fmt.Errorf("backend message %q of length %d", typ, size)
		}
		start := len(out)
		out = append(out, make([]byte, size+1)...)
		if _, err := io.ReadFull(br, out[start:]); err != nil {
			_ = flush()
			return err
		}
		switch typ {
		case 'K':
			var k pgproto3.BackendKeyData
			if k.Decode(out[start+5:]) == nil {
				l.setKey(s, cancelKey(k.ProcessID, k.SecretKey))
			}
		case 'Z':
			if br.Buffered() == 0 {
				// Nothing read ahead: the backend waits for a query, and the client
				// sends none before it has this ReadyForQuery.
				l.toKernel(s, up, down)
			}
			if err := flush(); err != nil {
				return err
			}
			if k := br.Buffered(); k > 0 {
				b, _ := br.Peek(k)
				n, err := s.client.Write(b)
				down.Add(int64(n))
				if err != nil {
					return err
				}
			}
			if ks := s.kernel.Load(); ks != nil {
				ks.startupSent()
			}
			return nil
		}
		if br.Buffered() == 0 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
}

// tuneTCP turns off Nagle (Go's default, made explicit) and keeps idle sessions alive.
func tuneTCP(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
		_ = tc.SetKeepAlive(true)
		_ = tc.SetKeepAlivePeriod(15 * time.Second)
	}
}
