package listener

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
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
// peer: the session is ending) is passed up as usual, and the listener's copy loops, which
// stay parked on both sockets, forward it and see each side's end of stream.
type kernelForwarder struct {
	socks *ebpf.Map // cookie -> socket
	peers *ebpf.Map // cookie -> the peer's cookie
	prog  *ebpf.Program
}

// kernelMaxSessions bounds the sessions forwarded in the kernel at once; later ones are
// forwarded by the copy loops.
const kernelMaxSessions = 32768

// newKernelForwarder loads the program and its maps. It fails without the privilege to
// load BPF programs (CAP_BPF and CAP_NET_ADMIN) or on kernels without sockhash verdicts.
func newKernelForwarder() (*kernelForwarder, error) {
	socks, err := ebpf.NewMap(&ebpf.MapSpec{Name: "agb_socks", Type: ebpf.SockHash, KeySize: 8, ValueSize: 8, MaxEntries: 2 * kernelMaxSessions})
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
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "agb_forward", Type: ebpf.SkSKB, AttachType: ebpf.AttachSkSKBVerdict,
		Instructions: insns, License: "GPL"})
	if err != nil {
		socks.Close()
		peers.Close()
		return nil, fmt.Errorf("load program: %w", err)
	}
	if err := link.RawAttachProgram(link.RawAttachProgramOptions{Target: socks.FD(), Program: prog, Attach: ebpf.AttachSkSKBVerdict}); err != nil {
		prog.Close()
		socks.Close()
		peers.Close()
		return nil, fmt.Errorf("attach program: %w", err)
	}
	return &kernelForwarder{socks: socks, peers: peers, prog: prog}, nil
}

func (k *kernelForwarder) close() {
	_ = link.RawDetachProgram(link.RawDetachProgramOptions{Target: k.socks.FD(), Program: k.prog, Attach: ebpf.AttachSkSKBVerdict})
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
	up, down                 *atomic.Int64 // bytes the copy loops moved, each way
}

type tcpCounts struct{ sent, received uint64 }

func tcpInfo(c *net.TCPConn) (tcpCounts, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return tcpCounts{}, err
	}
	var ti *unix.TCPInfo
	var gerr error
	if err := rc.Control(func(fd uintptr) { ti, gerr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) }); err != nil {
		return tcpCounts{}, err
	}
	if gerr != nil {
		return tcpCounts{}, gerr
	}
	return tcpCounts{sent: ti.Bytes_sent, received: ti.Bytes_received}, nil
}

func cookieAndFD(c *net.TCPConn) (cookie uint64, fd int, err error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var gerr error
	if err := rc.Control(func(f uintptr) {
		fd = int(f)
		cookie, gerr = unix.GetsockoptUint64(int(f), unix.SOL_SOCKET, unix.SO_COOKIE)
	}); err != nil {
		return 0, 0, err
	}
	return cookie, fd, gerr
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
	ckv, cfd, err := cookieAndFD(cc)
	if err != nil {
		return nil, err
	}
	bkv, bfd, err := cookieAndFD(bc)
	if err != nil {
		return nil, err
	}
	s := &kernelSession{k: k, client: cc, backend: bc, up: up, down: down}
	binary.NativeEndian.PutUint64(s.ck[:], ckv)
	binary.NativeEndian.PutUint64(s.bk[:], bkv)
	if err := k.peers.Update(s.ck[:], s.bk[:], ebpf.UpdateAny); err != nil {
		return nil, err
	}
	if err := k.peers.Update(s.bk[:], s.ck[:], ebpf.UpdateAny); err != nil {
		s.end()
		return nil, err
	}
	if err := k.socks.Update(s.ck[:], uint64(cfd), ebpf.UpdateAny); err != nil {
		s.end()
		return nil, err
	}
	if err := k.socks.Update(s.bk[:], uint64(bfd), ebpf.UpdateAny); err != nil {
		s.end()
		return nil, err
	}
	return s, nil
}

// mark records the byte counts from which the session's kernel forwarding is reckoned:
// called once the listener has written its last startup bytes to the client.
func (s *kernelSession) mark() {
	s.clientBase, _ = tcpInfo(s.client)
	s.backBase, _ = tcpInfo(s.backend)
	s.upMovedBase, s.dnMovedBase = s.up.Load(), s.down.Load()
}

// drained waits until everything the kernel took from one side has gone out of the other
// (bytes received on from since mark, less what the copy loop moved, have been sent on to),
// so that ending the session does not cut off the last messages (a Terminate, a FATAL
// error, the end of a large result) still queued in the kernel. eof says the side's end of
// stream was read: it took one sequence number, which TCP counts as a received byte. The
// wait lasts while the other side keeps taking bytes, as a copy loop blocked in write
// would; it gives up after stall without progress, or when the sockets are gone.
func (s *kernelSession) drained(toBackend, eof bool, stall time.Duration) {
	from, to := s.client, s.backend
	fromBase, toBase := s.clientBase, s.backBase
	moved, movedBase := s.up, s.upMovedBase
	if !toBackend {
		from, to = s.backend, s.client
		fromBase, toBase = s.backBase, s.clientBase
		moved, movedBase = s.down, s.dnMovedBase
	}
	fin := int64(0)
	if eof {
		fin = 1
	}
	var last int64 = -1
	lastMove := time.Now()
	for wait := 20 * time.Microsecond; ; wait = min(2*wait, 10*time.Millisecond) {
		fi, err1 := tcpInfo(from)
		ti, err2 := tcpInfo(to)
		if err1 != nil || err2 != nil {
			return
		}
		byUser := moved.Load() - movedBase
		byKernel := int64(fi.received-fromBase.received) - fin - byUser
		sent := int64(ti.sent-toBase.sent) - byUser
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
	t, err := tcpInfo(s.backend)
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
