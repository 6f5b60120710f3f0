package target

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// dialBlocking dials like net.Dialer and returns a connection whose reads and writes are
// plain blocking system calls on the socket, bypassing Go's network poller. A virtual user
// makes one round trip at a time, so a thread blocked in read(2) is exactly what it needs;
// the poller's extra wake-ups (EAGAIN, epoll, handing the goroutine back) cost the load
// generator about as much CPU again as the round trip itself (see make bench-stress).
//
// A deadline is honoured by shutting the socket down when it passes (a read blocked in the
// kernel cannot be interrupted otherwise), so the connection is then unusable: pgx treats a
// passed deadline as the end of the connection in any case, and clears deadlines it no
// longer needs, which stops the timer.
func dialBlocking(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	fc, ok := c.(interface{ File() (*os.File, error) })
	if !ok {
		return c, nil
	}
	f, err := fc.File()
	if err != nil {
		return c, nil
	}
	bc := &blockingConn{f: f, local: c.LocalAddr(), remote: c.RemoteAddr()}
	c.Close()
	bc.fd = int(f.Fd()) // Fd puts the duplicate (and so the socket) into blocking mode
	return bc, nil
}

type blockingConn struct {
	f             *os.File
	fd            int
	local, remote net.Addr
	mu            sync.Mutex
	timer         *time.Timer
	closed        bool
}

var errDeadline = errors.New("connection deadline passed")

func (c *blockingConn) Read(b []byte) (int, error) {
	for {
		n, err := syscall.Read(c.fd, b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, c.wrap("read", err)
		}
		if n == 0 && len(b) > 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (c *blockingConn) Write(b []byte) (int, error) {
	done := 0
	for done < len(b) {
		n, err := syscall.Write(c.fd, b[done:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return done, c.wrap("write", err)
		}
		done += n
	}
	return done, nil
}

func (c *blockingConn) wrap(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.local, Addr: c.remote, Err: os.NewSyscallError(op, err)}
}

// Close shuts the socket down first, which wakes a read blocked on it, then closes it.
func (c *blockingConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	if c.timer != nil {
		c.timer.Stop()
	}
	syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
	return c.f.Close()
}

func (c *blockingConn) LocalAddr() net.Addr  { return c.local }
func (c *blockingConn) RemoteAddr() net.Addr { return c.remote }

func (c *blockingConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	if t.IsZero() || c.closed {
		return nil
	}
	c.timer = time.AfterFunc(time.Until(t), func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.closed {
			syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
		}
	})
	return nil
}

func (c *blockingConn) SetReadDeadline(t time.Time) error  { return c.SetDeadline(t) }
func (c *blockingConn) SetWriteDeadline(t time.Time) error { return c.SetDeadline(t) }
