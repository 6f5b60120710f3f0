package target

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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
	fd, err := detach(c)
	if err != nil {
		return c, nil
	}
	bc := &blockingConn{fd: fd, local: c.LocalAddr(), remote: c.RemoteAddr(), born: time.Now()}
	// Closing the dialled connection takes its descriptor out of the poller's epoll set. The
	// duplicate must not be in it: epoll watches the socket, not the number, so a registered
	// twin would wake a poller thread on every packet the session sends or receives.
	c.Close()
	return bc, nil
}

// detach returns a blocking, close-on-exec duplicate of c's socket that Go's network poller
// does not know about. (os.File would not do: os.NewFile registers a non-blocking
// descriptor with the poller, and Fd makes it blocking without taking it out.)
func detach(c net.Conn) (int, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return -1, errors.New("not a socket")
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd, derr := -1, error(nil)
	if err := raw.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return -1, err
	}
	if derr != nil {
		return -1, derr
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

type blockingConn struct {
	fd            int
	local, remote net.Addr
	mu            sync.Mutex
	timer         *time.Timer
	closed        bool
	// expired is set when a deadline shut the socket down: what a read or write then
	// meets (end of file, a broken pipe) is that deadline, and is said to be one.
	expired atomic.Bool
	// born and yielded (time since born at the last yield) are the reader's (endTurn).
	born    time.Time
	yielded time.Duration
}

// yieldEvery is how often a reader of the connection goes through Go's scheduler of its own
// accord (runtime.Gosched). A goroutine that makes round trips in blocking system calls never
// does otherwise: the runtime's system monitor then sees its P run one scheduling turn for
// 10 ms, takes the P from the system call to preempt it and, every P idle, sleeps until the
// goroutine wants one back; woken so, it polls every 20 µs for the next millisecond, a
// wake-up of its thread per query or two (strace: 3,900 nanosleeps a second at one client of
// make bench-stress; perf: the monitor 15% of the load generator's CPU at two). A turn ended
// well within the 10 ms keeps the monitor at its 10 ms sleep. A reader locked to its thread
// (the runner's VUs are) keeps it: its P goes to another thread and back, two wake-ups every
// few milliseconds. (Unlocking it for the yield cost more at one client: it then moves to
// whichever thread picks it up, away from the core its server process is woken on.)
const yieldEvery = 4 * time.Millisecond

// endTurn yields once every yieldEvery.
func (c *blockingConn) endTurn() {
	if now := time.Since(c.born); now-c.yielded >= yieldEvery {
		c.yielded = now
		runtime.Gosched()
	}
}

var errDeadline = errors.New("connection deadline passed")

func (c *blockingConn) Read(b []byte) (int, error) {
	c.endTurn()
	for {
		n, err := syscall.Read(c.fd, b)
		if err == syscall.EINTR {
			continue
		}
		if (err != nil || n == 0 && len(b) > 0) && c.expired.Load() {
			return 0, c.timedOut("read")
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
		if err != nil && c.expired.Load() {
			return done, c.timedOut("write")
		}
		if err != nil {
			return done, c.wrap("write", err)
		}
		done += n
	}
	return done, nil
}

// timedOut is the error of an operation its deadline cut, as Go's own connections give it
// ("read tcp …: i/o timeout", a net.Error whose Timeout is true): pgx then says its
// connect or query timed out, where the end of file the shut-down socket gave read as the
// server's hanging up ("unexpected EOF").
func (c *blockingConn) timedOut(op string) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.local, Addr: c.remote, Err: os.ErrDeadlineExceeded}
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
	return os.NewSyscallError("close", syscall.Close(c.fd))
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
			c.expired.Store(true)
			syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
		}
	})
	return nil
}

func (c *blockingConn) SetReadDeadline(t time.Time) error  { return c.SetDeadline(t) }
func (c *blockingConn) SetWriteDeadline(t time.Time) error { return c.SetDeadline(t) }
