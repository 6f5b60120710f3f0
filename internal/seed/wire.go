package seed

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// wireChunk is how many bytes the wire meter moves between count updates.
const wireChunk = 1 << 20

// wireMeter is a loopback TCP relay between pg_basebackup and the primary that counts the
// bytes each way. pg_basebackup's socket reads do not show in /proc/PID/io, and a process's
// counters cannot be read after it exits, so this is how the bytes on the wire (compressed
// as sent) are known exactly. The relay moves bytes with splice(2) (Go's TCPConn.ReadFrom),
// so it costs little CPU; its cost is agbench's own.
//
// pg_basebackup opens its base-backup connection first and its WAL streamer's after; the
// first connection's bytes from the server are counted apart (Base) from the rest (Other).
type wireMeter struct {
	ln       net.Listener
	target   string
	accepted int
	base     atomic.Int64
	other    atomic.Int64
	toServer atomic.Int64
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    []net.Conn
	closed   bool
}

// newWireMeter listens on a free loopback port and relays each connection to target.
func newWireMeter(target string) (*wireMeter, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	w := &wireMeter{ln: ln, target: target}
	w.wg.Add(1)
	go w.accept()
	return w, nil
}

// Port is the relay's port.
func (w *wireMeter) Port() int { return w.ln.Addr().(*net.TCPAddr).Port }

func (w *wireMeter) accept() {
	defer w.wg.Done()
	for {
		c, err := w.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", w.target)
		if err != nil {
			c.Close()
			continue
		}
		if !w.track(c, s) {
			return
		}
		down := &w.other
		if w.accepted == 0 {
			down = &w.base
		}
		w.accepted++
		w.wg.Add(2)
		go w.pipe(s.(*net.TCPConn), c.(*net.TCPConn), down)
		go w.pipe(c.(*net.TCPConn), s.(*net.TCPConn), &w.toServer)
	}
}

func (w *wireMeter) track(c ...net.Conn) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		for _, x := range c {
			x.Close()
		}
		return false
	}
	w.conns = append(w.conns, c...)
	return true
}

// pipe copies src to dst in chunks, counting, then half-closes dst.
func (w *wireMeter) pipe(src, dst *net.TCPConn, n *atomic.Int64) {
	defer w.wg.Done()
	for {
		k, err := dst.ReadFrom(&io.LimitedReader{R: src, N: wireChunk})
		n.Add(k)
		if err != nil || k < wireChunk {
			break
		}
	}
	dst.CloseWrite()
	src.CloseRead()
}

// Bytes returns the bytes relayed so far from the server on the first connection (base),
// on the later ones (other), and from the clients to the server (up).
func (w *wireMeter) Bytes() (base, other, up int64) {
	return w.base.Load(), w.other.Load(), w.toServer.Load()
}

// Close stops the relay and closes every connection; it is idempotent.
func (w *wireMeter) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	conns := w.conns
	w.mu.Unlock()
	err := w.ln.Close()
	for _, c := range conns {
		c.Close()
	}
	w.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}
