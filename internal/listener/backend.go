package listener

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/agbench/agbench/internal/routing"
)

// backendBufSize is the size of the buffered reader on a backend's connection: large
// enough to hold any refusal the listener reads before it decides to retry.
const backendBufSize = 8192

// Reasons a new session moves on to the next candidate (metric label values).
const (
	retryConnectFailed      = "connect_failed"       // no TCP connection, or no answer to the startup message
	retryCannotConnectNow   = "cannot_connect_now"   // 57P03: starting up, shutting down, not accepting connections
	retryTooManyConnections = "too_many_connections" // 53300
)

// backendConn is a backend connection whose first answer to the StartupMessage has been
// read (and kept in br, not consumed), or the refusal of the last candidate tried.
type backendConn struct {
	d    routing.Decision
	conn net.Conn
	br   *bufio.Reader
	// refusal, when set, is the ErrorResponse with which the last candidate refused the
	// session (conn is closed then); why is it in words.
	refusal []byte
	why     string
}

// openBackend chooses a node for the intent, connects to it, sends the client's startup
// message and reads the backend's first answer, all before any byte of the backend
// reaches the client. A node that cannot be reached or that refuses the session for a
// reason of its own (57P03 cannot_connect_now: starting up, shutting down, not accepting
// connections; 53300 too_many_connections, when PostgreSQL finds no free slot before
// authentication) is counted, taken out of routing until its next good probe, and the
// session goes to the next candidate by the same rules as the first choice (the rest of a
// load-balanced set, then the next entries of the routing list, the primary when listed).
// Once the backend's first answer is anything else (an authentication request, another
// error), the session is that node's: errors after authentication are the client's.
//
// When no candidate is left, a refusal from the last one tried comes back in
// backendConn.refusal for the client; otherwise the routing refusal is returned, with
// FailBackendUnreachable when the last node tried could not be reached.
func (l *Listener) openBackend(intent routing.Intent, need causalNeed, startup []byte) (*backendConn, Failure, error) {
	nodes := l.health.routingNodes()
	cc := l.causalFor(intent, need)
	var last *backendConn
	unreachable := false
	for tries := 0; ; tries++ {
		if tries > 0 && l.isClosed() { // no retries once the listener is closing
			if last != nil {
				return last, FailNone, nil
			}
			return nil, FailShuttingDown, errors.New("the listener is closing")
		}
		d, err := l.choose(intent, cc, &nodes)
		var ce *causalError
		if errors.As(err, &ce) {
			return nil, ce.fail, err
		}
		if err != nil {
			if last != nil {
				return last, FailNone, nil
			}
			if unreachable {
				return nil, FailBackendUnreachable, err
			}
			if cc != nil && cc.skipped > 0 {
				return nil, FailCausalNoTarget, err
			}
			return nil, FailNoTarget, err
		}
		b, reason, why := l.tryBackend(d, startup)
		if reason == "" {
			if cc != nil {
				l.metrics.addCausalSession(d.Node, cc.waited > 0)
			}
			return b, FailNone, nil
		}
		last, unreachable = b, reason == retryConnectFailed
		l.metrics.addRetry(d.Node, reason)
		l.health.refuse(d.Node, why)
		l.emit(Event{Kind: "retry", Node: d.Node, Msg: fmt.Sprintf("refused a %s session at startup (%s); out of routing until its next good probe; the next candidate, if any, takes the session", intent, why)})
		nodes = withRefusing(nodes, d.Node, why)
	}
}

// tryBackend connects to the chosen node, sends the startup message and reads the first
// answer. A non-empty reason says the node refused the session in a way the next
// candidate may not (see openBackend); the connection is closed then.
func (l *Listener) tryBackend(d routing.Decision, startup []byte) (b *backendConn, reason, why string) {
	dialer := &net.Dialer{Timeout: l.cfg.DialTimeout, KeepAlive: 15 * time.Second}
	c, err := dialer.Dial("tcp", l.backend(d.Node).Addr)
	if err != nil {
		return nil, retryConnectFailed, rootCause(err)
	}
	tuneTCP(c)
	_ = c.SetDeadline(time.Now().Add(l.cfg.StartupTimeout))
	br := bufio.NewReaderSize(c, backendBufSize)
	msg, err := firstMessage(c, br, startup)
	if err != nil {
		_ = c.Close()
		return nil, retryConnectFailed, "no answer to the startup message: " + rootCause(err)
	}
	if reason, why := refusalOf(msg); reason != "" {
		_ = c.Close()
		return &backendConn{d: d, refusal: append([]byte(nil), msg...), why: why}, reason, why
	}
	_ = c.SetDeadline(time.Time{})
	return &backendConn{d: d, conn: c, br: br}, "", ""
}

// firstMessage sends the startup message and returns the backend's first message whole,
// left unread in br (a message too large to hold is returned as far as it fits: it is
// no refusal). PostgreSQL answers a StartupMessage without waiting for the client.
func firstMessage(c net.Conn, br *bufio.Reader, startup []byte) ([]byte, error) {
	if _, err := c.Write(startup); err != nil {
		return nil, err
	}
	hdr, err := br.Peek(5)
	if err != nil {
		return nil, err
	}
	size := int(int32(binary.BigEndian.Uint32(hdr[1:])))
	if size < 4 || size+1 > backendBufSize {
		return hdr, nil
	}
	return br.Peek(size + 1)
}

// refusalOf says whether a backend's first message refuses the session for a reason of
// that node's (see openBackend), and what it said.
func refusalOf(msg []byte) (reason, why string) {
	if len(msg) < 5 || msg[0] != 'E' {
		return "", ""
	}
	var e pgproto3.ErrorResponse
	if e.Decode(msg[5:]) != nil {
		return "", ""
	}
	switch e.Code {
	case codeCannotConnectNow:
		reason = retryCannotConnectNow
	case codeTooManyConns:
		reason = retryTooManyConnections
	default:
		return "", ""
	}
	return reason, e.Message + " (" + e.Code + ")"
}

func (l *Listener) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// withSkip returns a copy of nodes with one skipped for the session being routed.
func withSkip(nodes []routing.Node, name, why string) []routing.Node {
	c := append([]routing.Node(nil), nodes...)
	for i := range c {
		if c[i].Name == name {
			c[i].Skip = why
		}
	}
	return c
}

// withRefusing returns a copy of nodes with one marked as refusing sessions.
func withRefusing(nodes []routing.Node, name, why string) []routing.Node {
	c := append([]routing.Node(nil), nodes...)
	for i := range c {
		if c[i].Name == name {
			c[i].Refusing = why
		}
	}
	return c
}
