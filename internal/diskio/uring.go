//go:build linux

package diskio

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/agbench/agbench/internal/proc"
)

// The io_uring ABI as laid out in the kernel's include/uapi/linux/io_uring.h. No Go
// library for io_uring is served by the module proxy here, so the few calls the
// tester needs (setup, mmap of the rings, enter, register buffers and files) are made
// directly. Every layout below is checked by a size test.

const (
	uringOpReadFixed  = 4
	uringOpWriteFixed = 5

	uringSqeFixedFile = 1 << 0

	uringSetupCoopTaskrun  = 1 << 8
	uringSetupSingleIssuer = 1 << 12
	uringSetupDeferTaskrun = 1 << 13

	uringEnterGetEvents = 1 << 0
	uringEnterExtArg    = 1 << 3

	uringFeatSingleMmap = 1 << 0
	uringFeatExtArg     = 1 << 8

	uringOffSqRing = 0
	uringOffCqRing = 0x8000000
	uringOffSqes   = 0x10000000

	uringRegisterBuffers = 0
	uringRegisterFiles   = 2

	rwfDsync = 0x2 // RWF_DSYNC for per-write durability, as O_DSYNC
)

type uringSqOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type uringCqOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

type uringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  uringSqOffsets
	cqOff                                                                  uringCqOffsets
}

type uringSqe struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16
	fd          int32
	off         uint64
	addr        uint64
	len         uint32
	rwFlags     uint32
	userData    uint64
	bufIndex    uint16
	personality uint16
	spliceFdIn  int32
	addr3       uint64
	pad2        uint64
}

type uringCqe struct {
	userData uint64
	res      int32
	flags    uint32
}

type uringGeteventsArg struct {
	sigmask   uint64
	sigmaskSz uint32
	minWait   uint32
	ts        uint64
}

// ring is one io_uring instance owned by one OS thread.
type ring struct {
	fd       int
	sqMem    []byte
	cqMem    []byte
	sqeMem   []byte
	sqHead   *uint32
	sqTail   *uint32
	sqMask   uint32
	sqArray  []uint32
	sqes     []uringSqe
	cqHead   *uint32
	cqTail   *uint32
	cqMask   uint32
	cqes     []uringCqe
	features uint32
	flags    uint32
	// pending counts SQEs queued since the last enter.
	pending uint32
	// enters counts io_uring_enter calls that submitted something; maxBatch is the most
	// SQEs one of them handed over (tests check IOs go one per enter).
	enters   int64
	maxBatch uint32
	// arg and ts live on the heap so the kernel may read them through pointers.
	arg *uringGeteventsArg
	ts  *unix.Timespec
}

// UringError says io_uring could not be used (disabled by the kernel, not permitted,
// or too old); the caller falls back to the synchronous engine.
type UringError struct {
	Op  string
	Err error
}

func (e *UringError) Error() string { return "io_uring " + e.Op + ": " + e.Err.Error() }
func (e *UringError) Unwrap() error { return e.Err }

// uringDisabled reads /proc/sys/kernel/io_uring_disabled: 0 allowed, 1 allowed for a
// group, 2 disabled.
func uringDisabled() bool {
	v, err := proc.Host.SysctlInt("kernel.io_uring_disabled")
	return err == nil && v == 2 // unread (kernels before 6.6 have no such setting): allowed
}

func uringSetup(entries uint32, p *uringParams) (int, error) {
	fd, _, errno := syscall.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(p)), 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// newRing sets up a ring with at least entries slots. It must be called on the OS thread
// that will submit (single-issuer rings are bound to it).
func newRing(entries uint32) (*ring, error) {
	if uringDisabled() {
		return nil, &UringError{"setup", errors.New("disabled by /proc/sys/kernel/io_uring_disabled")}
	}
	var p uringParams
	p.flags = uringSetupSingleIssuer | uringSetupDeferTaskrun
	fd, err := uringSetup(entries, &p)
	if err == unix.EINVAL {
		p = uringParams{flags: uringSetupCoopTaskrun}
		fd, err = uringSetup(entries, &p)
	}
	if err == unix.EINVAL {
		p = uringParams{}
		fd, err = uringSetup(entries, &p)
	}
	if err != nil {
		return nil, &UringError{"setup", err}
	}
	r := &ring{fd: fd, features: p.features, flags: p.flags, arg: new(uringGeteventsArg), ts: new(unix.Timespec)}
	if err := r.mmap(&p); err != nil {
		r.close()
		return nil, &UringError{"mmap", err}
	}
	return r, nil
}

func (r *ring) mmap(p *uringParams) error {
	sqSize := int(p.sqOff.array + p.sqEntries*4)
	cqSize := int(p.cqOff.cqes + p.cqEntries*uint32(unsafe.Sizeof(uringCqe{})))
	single := p.features&uringFeatSingleMmap != 0
	if single && cqSize > sqSize {
		sqSize = cqSize
	}
	var err error
	r.sqMem, err = unix.Mmap(r.fd, uringOffSqRing, sqSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return err
	}
	if single {
		r.cqMem = r.sqMem
	} else {
		r.cqMem, err = unix.Mmap(r.fd, uringOffCqRing, cqSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
		if err != nil {
			return err
		}
	}
	sqeSize := int(p.sqEntries) * int(unsafe.Sizeof(uringSqe{}))
	r.sqeMem, err = unix.Mmap(r.fd, uringOffSqes, sqeSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return err
	}
	sq := unsafe.Pointer(&r.sqMem[0])
	cq := unsafe.Pointer(&r.cqMem[0])
	r.sqHead = (*uint32)(unsafe.Add(sq, p.sqOff.head))
	r.sqTail = (*uint32)(unsafe.Add(sq, p.sqOff.tail))
	r.sqMask = *(*uint32)(unsafe.Add(sq, p.sqOff.ringMask))
	r.sqArray = unsafe.Slice((*uint32)(unsafe.Add(sq, p.sqOff.array)), p.sqEntries)
	r.sqes = unsafe.Slice((*uringSqe)(unsafe.Pointer(&r.sqeMem[0])), p.sqEntries)
	r.cqHead = (*uint32)(unsafe.Add(cq, p.cqOff.head))
	r.cqTail = (*uint32)(unsafe.Add(cq, p.cqOff.tail))
	r.cqMask = *(*uint32)(unsafe.Add(cq, p.cqOff.ringMask))
	r.cqes = unsafe.Slice((*uringCqe)(unsafe.Add(cq, p.cqOff.cqes)), p.cqEntries)
	return nil
}

func (r *ring) close() {
	if r.sqeMem != nil {
		unix.Munmap(r.sqeMem)
	}
	if r.cqMem != nil && len(r.cqMem) > 0 && (len(r.sqMem) == 0 || &r.cqMem[0] != &r.sqMem[0]) {
		unix.Munmap(r.cqMem)
	}
	if r.sqMem != nil {
		unix.Munmap(r.sqMem)
	}
	r.sqeMem, r.cqMem, r.sqMem = nil, nil, nil
	if r.fd >= 0 {
		unix.Close(r.fd)
		r.fd = -1
	}
}

func (r *ring) register(op uintptr, arg unsafe.Pointer, n int) error {
	_, _, errno := syscall.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), op, uintptr(arg), uintptr(n), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// registerBuffers registers the IO buffers so READ_FIXED/WRITE_FIXED skip pinning per IO.
func (r *ring) registerBuffers(bufs [][]byte) error {
	iov := make([]unix.Iovec, len(bufs))
	for i, b := range bufs {
		iov[i].Base = &b[0]
		iov[i].SetLen(len(b))
	}
	err := r.register(uringRegisterBuffers, unsafe.Pointer(&iov[0]), len(iov))
	runtime.KeepAlive(iov)
	return err
}

// registerFile registers fd as fixed file 0.
func (r *ring) registerFile(fd int) error {
	fds := []int32{int32(fd)}
	err := r.register(uringRegisterFiles, unsafe.Pointer(&fds[0]), 1)
	runtime.KeepAlive(fds)
	return err
}

// queue fills the next SQE; the caller guarantees a free slot (at most entries in flight).
func (r *ring) queue(opcode uint8, fixedFile bool, fd int32, buf []byte, n int, off int64, bufIndex uint16, rwFlags uint32, userData uint64) {
	tail := atomic.LoadUint32(r.sqTail)
	idx := tail & r.sqMask
	s := &r.sqes[idx]
	*s = uringSqe{opcode: opcode, fd: fd, off: uint64(off), addr: uint64(uintptr(unsafe.Pointer(&buf[0]))),
		len: uint32(n), rwFlags: rwFlags, userData: userData, bufIndex: bufIndex}
	if fixedFile {
		s.flags = uringSqeFixedFile
	}
	r.sqArray[idx] = idx
	atomic.StoreUint32(r.sqTail, tail+1)
	r.pending++
}

// enter submits what is queued and waits for at least minComplete completions, or until
// timeoutNs passes when timeoutNs > 0 and the kernel has EXT_ARG. EINTR and ETIME are not
// errors.
func (r *ring) enter(minComplete uint32, timeoutNs int64) error {
	flags := uintptr(0)
	if minComplete > 0 {
		flags |= uringEnterGetEvents
	}
	var argp unsafe.Pointer
	var argsz uintptr
	if timeoutNs > 0 && r.features&uringFeatExtArg != 0 {
		*r.ts = unix.NsecToTimespec(timeoutNs)
		*r.arg = uringGeteventsArg{ts: uint64(uintptr(unsafe.Pointer(r.ts)))}
		argp, argsz = unsafe.Pointer(r.arg), unsafe.Sizeof(uringGeteventsArg{})
		flags |= uringEnterExtArg
	}
	return r.enterRaw(minComplete, flags, argp, argsz)
}

// submit hands what is queued to the kernel without waiting. GETEVENTS with no minimum
// also posts completions the kernel holds back for a DEFER_TASKRUN ring, so the next
// reap sees them without another call (fio's commit does the same).
func (r *ring) submit() error {
	return r.enterRaw(0, uringEnterGetEvents, nil, 0)
}

func (r *ring) enterRaw(minComplete uint32, flags uintptr, argp unsafe.Pointer, argsz uintptr) error {
	if r.pending > 0 {
		r.enters++
		r.maxBatch = max(r.maxBatch, r.pending)
	}
	n, _, errno := syscall.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(r.pending), uintptr(minComplete), flags, uintptr(argp), argsz)
	if errno == 0 {
		r.pending -= uint32(n)
		return nil
	}
	if errno == unix.EINTR || errno == unix.ETIME || errno == unix.EAGAIN || errno == unix.EBUSY {
		return nil
	}
	return fmt.Errorf("io_uring_enter: %w", errno)
}

// reap calls f for every completion ready now and returns how many there were.
func (r *ring) reap(f func(userData uint64, res int32)) int {
	head := atomic.LoadUint32(r.cqHead)
	tail := atomic.LoadUint32(r.cqTail)
	n := 0
	for ; head != tail; head++ {
		c := &r.cqes[head&r.cqMask]
		f(c.userData, c.res)
		n++
	}
	atomic.StoreUint32(r.cqHead, head)
	return n
}
