package listener

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// kernelForwarder moves a session's bytes between its client and backend sockets inside
// the kernel, once the startup phase is over. Both sockets go into a BPF sockhash keyed by
// socket cookie; an SK_SKB verdict program attached to the sockhash looks up each arriving
// buffer's peer in a second map and redirects it to the peer socket's send side, so a query
// and its answer cross the listener without waking it. What the program cannot place (no
// peer: the session is ending) is passed up as usual; the session's watch, parked in poll
// on its own descriptors of both sockets, forwards it and sees each side's end of stream.
type kernelForwarder struct {
	socks               *ebpf.Map // cookie -> socket
	peers               *ebpf.Map // cookie -> the peer's cookie
	prog, parser        *ebpf.Program
	parserOn, verdictOn bool
}

// kernelMaxSessions bounds the sessions forwarded in the kernel at once; later ones are
// forwarded by the copy loops.
const kernelMaxSessions = 32768

// newKernelForwarder loads the program and its maps. It fails without the privilege to
// load BPF programs (CAP_BPF and CAP_NET_ADMIN) or on kernels without sockhash verdicts.
func newKernelForwarder() (*kernelForwarder, error) {
	socks, err := ebpf.NewMap(&ebpf.MapSpec{Name: "agb_socks", Type: ebpf.SockHash, KeySize: 8, ValueSize: 8, MaxEntries: 2 * kernelMaxSessions})
	if errors.Is(err, unix.EPERM) {
		return nil, errors.New("not permitted to load BPF programs (needs root, or CAP_BPF and CAP_NET_ADMIN)")
	}
	if err != nil {
		return nil, fmt.Errorf("sockhash: %w", err)
	}
	peers, err := ebpf.NewMap(&ebpf.MapSpec{Name: "agb_peers", Type: ebpf.Hash, KeySize: 8, ValueSize: 8, MaxEntries: 2 * kernelMaxSessions, Flags: unix.BPF_F_NO_PREALLOC})
	if err != nil {
		socks.Close()
		return nil, fmt.Errorf("peer map: %w", err)
	}
	// r6 = skb; key = cookie(skb); peer = peers[key]; if none: SK_PASS;
	// else return sk_redirect_hash(skb, socks, peer, 0) (0: to the peer's send side).
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.FnGetSocketCookie.Call(),
		asm.StoreMem(asm.RFP, -8, asm.R0, asm.DWord),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -8),
		asm.LoadMapPtr(asm.R1, peers.FD()),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "pass"),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.LoadMapPtr(asm.R2, socks.FD()),
		asm.Mov.Reg(asm.R3, asm.R0),
		asm.Mov.Imm(asm.R4, 0),
		asm.FnSkRedirectHash.Call(),
		asm.Return(),
		asm.Mov.Imm(asm.R0, 1).WithSymbol("pass"), // SK_PASS
		asm.Return(),
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "agb_forward", Type: ebpf.SkSKB, AttachType: ebpf.AttachSkSKBStreamVerdict,
		Instructions: insns, License: "GPL"})
	if err != nil {
		socks.Close()
		peers.Close()
		return nil, fmt.Errorf("load program: %w", err)
	}
	k := &kernelForwarder{socks: socks, peers: peers, prog: prog}
	// The stream parser (a whole buffer is one message: return skb->len) puts the
	// sockets on the kernel's strparser path. Without it (BPF_SK_SKB_VERDICT, the newer
	// read_skb path) transfers that go both ways at once broke on kernel 6.18: the
	// redirected side's backlog reported EPIPE (TestKernelForwarderFullDuplex).
	k.parser, err = ebpf.NewProgram(&ebpf.ProgramSpec{Name: "agb_parse", Type: ebpf.SkSKB, AttachType: ebpf.AttachSkSKBStreamParser,
		Instructions: asm.Instructions{asm.LoadMem(asm.R0, asm.R1, 0, asm.Word), asm.Return()}, License: "GPL"})
	if err != nil {
		k.close()
		return nil, fmt.Errorf("load parser: %w", err)
	}
	if err := link.RawAttachProgram(link.RawAttachProgramOptions{Target: socks.FD(), Program: k.parser, Attach: ebpf.AttachSkSKBStreamParser}); err != nil {
		k.close()
		return nil, fmt.Errorf("attach parser: %w", err)
	}
	k.parserOn = true
	if err := link.RawAttachProgram(link.RawAttachProgramOptions{Target: socks.FD(), Program: prog, Attach: ebpf.AttachSkSKBStreamVerdict}); err != nil {
		k.close()
		return nil, fmt.Errorf("attach program: %w", err)
	}
	k.verdictOn = true
	return k, nil
}

func (k *kernelForwarder) close() {
	if k.verdictOn {
		_ = link.RawDetachProgram(link.RawDetachProgramOptions{Target: k.socks.FD(), Program: k.prog, Attach: ebpf.AttachSkSKBStreamVerdict})
	}
	if k.parserOn {
		_ = link.RawDetachProgram(link.RawDetachProgramOptions{Target: k.socks.FD(), Program: k.parser, Attach: ebpf.AttachSkSKBStreamParser})
	}
	if k.parser != nil {
		k.parser.Close()
	}
	k.prog.Close()
	k.peers.Close()
	k.socks.Close()
}

// kernelSession is one session forwarded in the kernel: the two sockets' cookies, and the
// byte counts at the moment forwarding began, from which the end of a session knows how
// much the kernel has yet to pass on.
type kernelSession struct {
	k                        *kernelForwarder
	client, backend          *net.TCPConn
	ck, bk                   [8]byte
	clientBase, backBase     tcpCounts
	upMovedBase, dnMovedBase int64
	// clientPre is what the listener wrote to the client after mark that it had read from
	// the backend before mark (the rest of the startup phase, ReadyForQuery last).
	clientPre int64
	up, down  *atomic.Int64 // bytes the copy loops moved, each way
	// cinfo and binfo read the two sockets' TCP counters: through the net.Conns, or
	// through the session's own descriptors once detach has taken it off the poller.
	cinfo, binfo func() (tcpCounts, error)

	mu       sync.Mutex
	cfd, bfd int  // own descriptors after detach, else -1
	stopped  bool // shutdown was called: the session is being cut
	// why says what ended the watch (for a failing test's message), once it returned.
	why string
}

// tcpCounts are a socket's data bytes sent (each once: the kernel's bytes_sent counts a
// retransmission again, and bytes_retrans says how much that was), acknowledged by the peer
// (once each, plus one for each of SYN and FIN sent and acknowledged) and received (plus
// one for a FIN received).
type tcpCounts struct {
	sent, acked, received uint64
	closed                bool // the connection is gone (reset, or closed both ways)
}

// tcpClose is TCP_CLOSE in the kernel's TCP states (include/net/tcp_states.h): where a
// socket ends after a reset.
const tcpClose = 7

func tcpInfoFD(fd int) (tcpCounts, error) {
	ti, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
	if err != nil {
		return tcpCounts{}, err
	}
	return tcpCounts{sent: ti.Bytes_sent - ti.Bytes_retrans, acked: ti.Bytes_acked, received: ti.Bytes_received, closed: ti.State == tcpClose}, nil
}

// withFD runs f on c's descriptor while c holds it (the number cannot be closed and
// reused by another socket meanwhile), and returns f's error.
func withFD(c *net.TCPConn, f func(fd int) error) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = f(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

func tcpInfo(c *net.TCPConn) (t tcpCounts, err error) {
	err = withFD(c, func(fd int) (err error) { t, err = tcpInfoFD(fd); return err })
	return t, err
}

func cookieOf(c *net.TCPConn) (cookie uint64, err error) {
	err = withFD(c, func(fd int) (err error) {
		cookie, err = unix.GetsockoptUint64(fd, unix.SOL_SOCKET, unix.SO_COOKIE)
		return err
	})
	return cookie, err
}

// insert puts c's socket into the sockhash under key.
func (k *kernelForwarder) insert(c *net.TCPConn, key []byte) error {
	return withFD(c, func(fd int) error { return k.socks.Update(key, uint64(fd), ebpf.UpdateAny) })
}

// start puts a session's sockets into the kernel's hands. It is called when the backend
// has sent ReadyForQuery and before the client has it, so neither side has anything in
// flight; up and down count the bytes the copy loops move from then on.
func (k *kernelForwarder) start(client, backend net.Conn, up, down *atomic.Int64) (*kernelSession, error) {
	cc, ok1 := client.(*net.TCPConn)
	bc, ok2 := backend.(*net.TCPConn)
	if !ok1 || !ok2 {
		return nil, errors.New("not a plain TCP session")
	}
	ckv, err := cookieOf(cc)
	if err != nil {
		return nil, err
	}
	bkv, err := cookieOf(bc)
	if err != nil {
		return nil, err
	}
	s := &kernelSession{k: k, client: cc, backend: bc, up: up, down: down, cfd: -1, bfd: -1,
		cinfo: func() (tcpCounts, error) { return tcpInfo(cc) }, binfo: func() (tcpCounts, error) { return tcpInfo(bc) }}
	binary.NativeEndian.PutUint64(s.ck[:], ckv)
	binary.NativeEndian.PutUint64(s.bk[:], bkv)
	if err := k.peers.Update(s.ck[:], s.bk[:], ebpf.UpdateAny); err != nil {
		return nil, err
	}
	if err := k.peers.Update(s.bk[:], s.ck[:], ebpf.UpdateAny); err != nil {
		s.end()
		return nil, err
	}
	if err := k.insert(cc, s.ck[:]); err != nil {
		s.end()
		return nil, err
	}
	if err := k.insert(bc, s.bk[:]); err != nil {
		s.end()
		return nil, err
	}
	return s, nil
}

// mark records the byte counts from which the session's kernel forwarding is reckoned:
// called once the listener has written its last startup bytes to the client.
func (s *kernelSession) mark() {
	cinfo, binfo := s.infos()
	s.clientBase, _ = cinfo()
	s.backBase, _ = binfo()
	s.upMovedBase, s.dnMovedBase = s.up.Load(), s.down.Load()
}

// startupSent is called once the listener has written the last of the startup phase to
// the client: those bytes went out after mark but came in before it.
func (s *kernelSession) startupSent() {
	d := s.down.Load()
	s.clientPre = d - s.dnMovedBase
	s.dnMovedBase = d
}

// drained waits until everything the kernel took from one side has gone out of the other
// (bytes received on from since mark, less what the copy loop moved, have been sent on to),
// so that ending the session does not cut off the last messages (a Terminate, a FATAL
// error, the end of a large result) still queued in the kernel. eof says the side's end of
// stream was read: it took one sequence number, which TCP counts as a received byte. The
// wait lasts while the other side keeps taking bytes, as a copy loop blocked in write
// would; it gives up after stall without progress, when the receiving side has been reset
// (what the kernel still holds for it is dropped, as a copy loop's write would fail), or
// when the sockets are gone.
func (s *kernelSession) drained(toBackend, eof bool, stall time.Duration) {
	cinfo, binfo := s.infos()
	from, to := cinfo, binfo
	fromBase, toBase := s.clientBase, s.backBase
	moved, movedBase := s.up, s.upMovedBase
	var pre int64
	if !toBackend {
		from, to = binfo, cinfo
		fromBase, toBase = s.backBase, s.clientBase
		moved, movedBase = s.down, s.dnMovedBase
		pre = s.clientPre
	}
	fin := int64(0)
	if eof {
		fin = 1
	}
	var last int64 = -1
	lastMove := time.Now()
	for wait := 20 * time.Microsecond; ; wait = min(2*wait, 10*time.Millisecond) {
		fi, err1 := from()
		ti, err2 := to()
		if err1 != nil || err2 != nil || s.isStopped() || ti.closed {
			return // nothing can go out of a reset socket any more
		}
		byUser := moved.Load() - movedBase
		byKernel := int64(fi.received-fromBase.received) - fin - byUser
		sent := int64(ti.acked-toBase.acked) - byUser - pre
		if sent >= byKernel {
			return
		}
		if sent != last {
			last, lastMove = sent, time.Now()
			wait = 20 * time.Microsecond
		} else if time.Since(lastMove) > stall {
			return
		}
		time.Sleep(wait)
	}
}

// bytes returns what the session moved each way over its whole life, as the backend
// socket counted it; eof says the backend's end of stream was read (TCP counts it as a
// byte received).
func (s *kernelSession) bytes(eof bool) (toBackend, toClient int64, ok bool) {
	_, binfo := s.infos()
	t, err := binfo()
	if err != nil {
		return 0, 0, false
	}
	toClient = int64(t.received)
	if eof {
		toClient--
	}
	return int64(t.sent), toClient, true
}

// end takes the session out of the maps (closing its sockets would too).
func (s *kernelSession) end() {
	_ = s.k.peers.Delete(s.ck[:])
	_ = s.k.peers.Delete(s.bk[:])
	_ = s.k.socks.Delete(s.ck[:])
	_ = s.k.socks.Delete(s.bk[:])
}

// infos returns the readers of the two sockets' counters (they change at detach).
func (s *kernelSession) infos() (cinfo, binfo func() (tcpCounts, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cinfo, s.binfo
}

func (s *kernelSession) isStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

// detach takes the session off Go's network poller: the poller watches a socket for
// writability too, and every acknowledgement of what the kernel sent would wake it. The
// session gets its own duplicates of the two descriptors, and the caller then closes the
// net.Conns (the sockets stay open, in the sockhash, through the duplicates); watch waits
// on them for each side's end. It is called once the startup phase is over.
func (s *kernelSession) detach() error {
	cfd, err := dupConn(s.client)
	if err != nil {
		return err
	}
	bfd, err := dupConn(s.backend)
	if err != nil {
		unix.Close(cfd)
		return err
	}
	s.mu.Lock()
	s.cfd, s.bfd = cfd, bfd
	if s.stopped {
		unix.Shutdown(cfd, unix.SHUT_RDWR)
		unix.Shutdown(bfd, unix.SHUT_RDWR)
	}
	s.mu.Unlock()
	s.mu.Lock()
	s.cinfo = func() (tcpCounts, error) { return tcpInfoFD(cfd) }
	s.binfo = func() (tcpCounts, error) { return tcpInfoFD(bfd) }
	s.mu.Unlock()
	return nil
}

func dupConn(c *net.TCPConn) (fd int, err error) {
	err = withFD(c, func(f int) (err error) { fd, err = unix.FcntlInt(uintptr(f), unix.F_DUPFD_CLOEXEC, 0); return err })
	return fd, err
}

// shutdown cuts a detached session (it wakes watch); before detach it only marks the
// session, and detach cuts it.
func (s *kernelSession) shutdown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	if s.cfd >= 0 {
		unix.Shutdown(s.cfd, unix.SHUT_RDWR)
		unix.Shutdown(s.bfd, unix.SHUT_RDWR)
	}
}

// watch waits on a detached session's sockets until it ends, as the copy loops would: the
// client's end of stream is passed to the backend once the kernel has sent what preceded
// it; the backend's end, or its reset, ends the session once the client has what preceded
// it; any other error or shutdown ends it at once. Bytes the verdict program passes up instead of redirecting
// (a session being taken out of the maps) are copied here. It closes the descriptors and
// returns the session's byte counts as the backend socket saw them.
func (s *kernelSession) watch() (toBackend, toClient int64, ok bool) {
	w := &watching{s: s, fds: [2]int{s.cfd, s.bfd}, moved: [2]*atomic.Int64{s.up, s.down}, passed: make(chan struct{})}
	why := "shutdown"
	pfd := make([]unix.PollFd, 0, 2)
loop:
	for !s.isStopped() {
		pfd = w.pollSet(pfd[:0])
		timeout := -1
		if w.backendDone {
			select {
			case <-w.passed:
				why = "the backend's end passed on"
				break loop
			default:
			}
			timeout = 10 // ms: look at passed again
		}
		if _, err := unix.Poll(pfd, timeout); err != nil {
			if err == unix.EINTR {
				continue
			}
			why = fmt.Sprintf("poll: %v", err)
			break
		}
		for _, p := range pfd {
			if p.Revents == 0 {
				continue
			}
			if end, ended := w.ready(p); ended {
				why = end
				break loop
			}
		}
	}
	toBackend, toClient, ok = s.bytes(w.backendDone)
	s.mu.Lock()
	s.why = why
	s.stopped = true
	unix.Close(s.cfd)
	unix.Close(s.bfd)
	s.cfd, s.bfd = -1, -1
	s.mu.Unlock()
	return toBackend, toClient, ok
}

// watching is watch's state: the two descriptors (client, backend), the byte counters of
// each direction, which sides have ended, and the buffer for bytes passed up.
type watching struct {
	s                       *kernelSession
	fds                     [2]int
	moved                   [2]*atomic.Int64
	clientDone, backendDone bool
	passed                  chan struct{} // closed when the backend's end has been passed on
	buf                     []byte
	spins                   int
}

// pollSet lists what to wait for. After the client's end of stream its socket is still
// watched for errors and hang-ups (always reported; the listener never shuts down its
// sending side before the end, so a hang-up means a reset): a client that half-closed and
// then went away ends the session at once, as a copy loop's failed write would, rather
// than after kernelDrainStall. After the backend's end, its hang-up is the normal course.
func (w *watching) pollSet(pfd []unix.PollFd) []unix.PollFd {
	if !w.clientDone {
		pfd = append(pfd, unix.PollFd{Fd: int32(w.fds[0]), Events: unix.POLLIN | unix.POLLRDHUP})
	} else {
		pfd = append(pfd, unix.PollFd{Fd: int32(w.fds[0])})
	}
	if !w.backendDone {
		pfd = append(pfd, unix.PollFd{Fd: int32(w.fds[1]), Events: unix.POLLIN | unix.POLLRDHUP})
	}
	return pfd
}

// ready handles one descriptor that poll reported, and says why the session ends when it
// does.
func (w *watching) ready(p unix.PollFd) (why string, ended bool) {
	s := w.s
	from := 0
	if int(p.Fd) == w.fds[1] {
		from = 1
	}
	if p.Events == 0 { // the ended client, reset: nothing more can reach it
		return fmt.Sprintf("the client's socket after its end: events %#x", p.Revents), true
	}
	if w.buf == nil {
		w.buf = make([]byte, copyBuf)
	}
	n, err := unix.Read(w.fds[from], w.buf)
	switch {
	case err == unix.EAGAIN:
		// Readable by poll but nothing to read: the parser still holds the data.
		// Give it a moment rather than spin.
		w.spins++
		time.Sleep(time.Duration(min(w.spins, 100)) * 10 * time.Microsecond)
	case err == unix.EINTR:
	case err != nil:
		if from == 1 {
			// The backend's connection was reset (a backend that ended with a
			// FATAL error while the client's next query sat unread in its socket
			// is closed with a reset). What the kernel took from it before the
			// reset may still be on its way to the client: a copy loop reads it
			// before the error and writes it on, so let it go out first. EPIPE is
			// a reset after the backend's end of stream (TCP state CLOSE_WAIT),
			// which took a sequence number; ECONNRESET, a reset before it.
			s.drained(false, err == unix.EPIPE, kernelDrainStall)
		}
		return fmt.Sprintf("read %s: %v", [2]string{"client", "backend"}[from], err), true
	case n > 0:
		w.spins = 0
		if err := writeAllFD(w.fds[1-from], w.buf[:n]); err != nil {
			return fmt.Sprintf("write %s: %v", [2]string{"backend", "client"}[from], err), true
		}
		w.moved[from].Add(int64(n))
	case from == 0: // the client's end
		w.clientDone = true
		go func() {
			s.drained(true, true, kernelDrainStall)
			s.mu.Lock()
			if s.bfd >= 0 {
				unix.Shutdown(s.bfd, unix.SHUT_WR)
			}
			s.mu.Unlock()
		}()
	default: // the backend's end
		w.backendDone = true
		passed := w.passed
		go func() {
			s.drained(false, true, kernelDrainStall)
			close(passed)
		}()
	}
	return "", false
}

// writeAllFD writes b to a non-blocking descriptor, waiting for room as needed.
func writeAllFD(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		switch {
		case err == unix.EAGAIN:
			if _, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}, -1); err != nil && err != unix.EINTR {
				return err
			}
		case err == unix.EINTR:
		case err != nil:
			return err
		default:
			b = b[n:]
		}
	}
	return nil
}
