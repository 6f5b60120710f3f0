package listener

import (
	"encoding/binary"
	"io"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// cancelTimeout bounds forwarding one cancel request to a backend.
const cancelTimeout = 5 * time.Second

// cancelKey is the process ID and secret key a backend gave the session
// (BackendKeyData); clients quote both in a CancelRequest.
func cancelKey(pid uint32, secret []byte) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], pid)
	return string(b[:]) + string(secret)
}

func (l *Listener) setKey(s *session, key string) {
	l.mu.Lock()
	s.key = key
	l.keys[key] = s
	l.mu.Unlock()
}

// cancel passes a CancelRequest to the backend of the session it names. An unknown key
// is dropped silently, as the server does.
func (l *Listener) cancel(m *pgproto3.CancelRequest) {
	l.mu.Lock()
	s := l.keys[cancelKey(m.ProcessID, m.SecretKey)]
	l.mu.Unlock()
	if s == nil {
		l.metrics.addCancel("unknown")
		return
	}
	b := l.backend(s.node)
	if err := sendCancel(b.Addr, m); err != nil {
		l.metrics.addCancel("failed")
		l.emit(Event{Kind: "error", Node: s.node, Msg: "cancel request: " + err.Error()})
		return
	}
	l.metrics.addCancel("forwarded")
}

// sendCancel sends the request and waits for the server to close the connection, which
// it does once it has signalled the backend process.
func sendCancel(addr string, m *pgproto3.CancelRequest) error {
	buf, err := m.Encode(nil)
	if err != nil {
		return err
	}
	c, err := net.DialTimeout("tcp", addr, cancelTimeout)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(cancelTimeout))
	if _, err := c.Write(buf); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, c)
	return nil
}
