package diskio

import (
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

const (
	uringOpRead  = 22
	uringOpWrite = 23
)

// worker is what every engine needs to issue one stream of IO.
type worker struct {
	w     *Workload
	fd    int
	clk   clock
	win   *window
	rec   *recorder
	pick  *picker
	qd    int
	buf   []byte // qd x MaxBlock, page-aligned
	block int64
	// period is the nanoseconds between this worker's IOs at a fixed rate (0: none);
	// phase staggers workers so they do not all fire at once.
	period, phase int64
	// verify: stamp writes with gen; check reads when checkReads.
	unit       int64
	gen        uint64
	checkReads bool
	// enters and maxBatch are the io_uring engine's submitting enters and the most IOs one
	// of them carried, kept when it returns.
	enters   int64
	maxBatch uint32
}

func (k *worker) slot(i int) []byte { return k.buf[int64(i)*k.block : int64(i+1)*k.block] }

// due returns when IO number i should start at a fixed rate.
func (k *worker) due(i int64) int64 { return k.phase + i*k.period }

// maxNap bounds one sleep of a fixed-rate worker, so the end of the window (or Ctrl-C)
// is noticed promptly even at a slow rate.
const maxNap = 50 * time.Millisecond

// sleepUntil sleeps until t or the end of the window, whichever comes first.
func (k *worker) sleepUntil(t int64) {
	for {
		now := k.clk.now()
		d := min(t, k.win.end.Load()) - now
		if d <= 0 {
			return
		}
		time.Sleep(min(time.Duration(d), maxNap))
	}
}

func (k *worker) prepare(b []byte, r ioReq) {
	if r.write && k.w.Verify {
		stampBuffer(b, r.off, k.unit, k.gen)
	}
}

func (k *worker) checked(b []byte, r ioReq) {
	if !r.write && k.checkReads {
		var bad []int64
		bad = checkBuffer(b, r.off, k.unit, bad)
		if len(bad) > 0 {
			k.rec.noteBad(bad)
		}
	}
}

// runSync issues one IO at a time with pread/pwrite; queue depth comes from running
// several such workers per thread.
func (k *worker) runSync() {
	b0 := k.slot(0)
	for i := int64(0); ; i++ {
		now := k.clk.now()
		if now >= k.win.end.Load() {
			return
		}
		var due int64 = -1
		if k.period > 0 {
			due = k.due(i)
			if due > now {
				k.sleepUntil(due)
				if k.clk.now() >= k.win.end.Load() {
					return
				}
			}
		}
		r := k.pick.next()
		b := b0[:r.size]
		k.prepare(b, r)
		var n int
		var err error
		t0 := k.clk.now()
		if r.write {
			n, err = unix.Pwrite(k.fd, b, r.off)
		} else {
			n, err = unix.Pread(k.fd, b, r.off)
		}
		done := k.clk.now()
		if err == nil && n != len(b) {
			err = fmt.Errorf("short %s at offset %d: %d of %d bytes", opName(r.write), r.off, n, len(b))
		}
		if err != nil {
			k.rec.err = fmt.Errorf("%s at offset %d: %w", opName(r.write), r.off, err)
			return
		}
		k.checked(b, r)
		if due >= 0 {
			if t0-due > k.period {
				k.rec.late++
			}
			t0 = min(t0, due)
		}
		k.rec.record(r.write, r.size, t0, done)
	}
}

func opName(write bool) string {
	if write {
		return "write"
	}
	return "read"
}

type inflight struct {
	req    ioReq
	submit int64
}

// runUring keeps qd IOs in flight on one io_uring, on a locked OS thread; buffers and
// the file are registered with the ring so each IO skips page pinning and fd lookup.
//
// Each IO goes to the kernel on its own io_uring_enter as soon as its slot is free, as
// fio does; only the last one of a refill rides on the enter that waits. Handing a whole
// refill over in one enter was measured to keep the virtio disk here less busy: at QD 16
// and 64 the device saw more IOs queued yet served them slower (0.8-0.9x fio's IOPS),
// while one IO per enter matched fio's device queue, latency and IOPS.
func (k *worker) runUring() error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r, err := newRing(uint32(k.qd))
	if err != nil {
		return err
	}
	defer r.close()
	defer func() { k.enters, k.maxBatch = r.enters, r.maxBatch }()
	u := newUringRun(k, r)
	for {
		now := k.clk.now()
		live := !u.stopping && now < k.win.end.Load()
		now, ok := u.fill(live, now)
		if !ok {
			return nil
		}
		if u.n == 0 {
			if !live {
				return nil
			}
			k.sleepUntil(k.due(u.seq))
			continue
		}
		var timeout int64
		if live && k.period > 0 && len(u.free) > 0 {
			timeout = max(k.due(u.seq)-now, 1000)
		}
		if err := r.enter(1, timeout); err != nil {
			k.fail(err)
			return nil
		}
		u.done = k.clk.now()
		r.reap(u.reap)
	}
}

// fail keeps the worker's first error.
func (k *worker) fail(err error) {
	if k.rec.err == nil {
		k.rec.err = err
	}
}

// uringRun is one worker's ring and its slots: which are free, what each one in flight
// carries, and how many IOs were issued.
type uringRun struct {
	k          *worker
	r          *ring
	bufs       [][]byte
	fixedFile  bool
	fd         int32
	rdOp, wrOp uint8
	slots      []inflight
	free       []int
	// n is the IOs in flight, seq the IOs issued; done is when the last enter returned.
	n        int
	seq      int64
	done     int64
	stopping bool
}

// newUringRun registers the worker's buffers and file with the ring where the kernel
// allows it, and frees every slot.
func newUringRun(k *worker, r *ring) *uringRun {
	u := &uringRun{k: k, r: r, bufs: make([][]byte, k.qd), fd: int32(k.fd), rdOp: uringOpRead, wrOp: uringOpWrite}
	for i := range u.bufs {
		u.bufs[i] = k.slot(i)
	}
	fixedBufs := r.registerBuffers(u.bufs) == nil
	u.fixedFile = r.registerFile(k.fd) == nil
	if u.fixedFile {
		u.fd = 0
	}
	if fixedBufs {
		u.rdOp, u.wrOp = uringOpReadFixed, uringOpWriteFixed
	}
	u.slots = make([]inflight, k.qd)
	u.free = make([]int, k.qd)
	for i := range u.free {
		u.free[i] = k.qd - 1 - i
	}
	return u
}

// fill queues an IO into every free slot while the window is live (at a fixed rate, only
// the IOs due by now), first sending the IO queued before on its own enter. It returns the
// clock's reading after the last enter, and false when an enter failed.
func (u *uringRun) fill(live bool, now int64) (int64, bool) {
	k := u.k
	for live && len(u.free) > 0 {
		if u.r.pending > 0 {
			// Another slot is free: send the IO queued before on its own, now.
			if err := u.r.submit(); err != nil {
				k.fail(err)
				return now, false
			}
			now = k.clk.now()
		}
		submit := now
		if k.period > 0 {
			due := k.due(u.seq)
			if due > now {
				break
			}
			if now-due > k.period {
				k.rec.late++
			}
			submit = due
		}
		u.seq++
		u.queue(submit)
	}
	return now, true
}

// queue puts the next IO into a free slot, timed from submit.
func (u *uringRun) queue(submit int64) {
	i := u.free[len(u.free)-1]
	u.free = u.free[:len(u.free)-1]
	req := u.k.pick.next()
	b := u.bufs[i][:req.size]
	u.k.prepare(b, req)
	op := u.rdOp
	if req.write {
		op = u.wrOp
	}
	u.r.queue(op, u.fixedFile, u.fd, b, int(req.size), req.off, uint16(i), 0, uint64(i))
	u.slots[i] = inflight{req, submit}
	u.n++
}

// reap takes one completion: it frees the slot, and records the IO or stops the worker on
// an error or a short transfer.
func (u *uringRun) reap(ud uint64, res int32) {
	k, s := u.k, &u.slots[ud]
	u.free = append(u.free, int(ud))
	u.n--
	switch {
	case res < 0:
		k.fail(fmt.Errorf("%s at offset %d: %w", opName(s.req.write), s.req.off, unix.Errno(-res)))
		u.stopping = true
		return
	case int64(res) != s.req.size:
		k.fail(fmt.Errorf("short %s at offset %d: %d of %d bytes", opName(s.req.write), s.req.off, res, s.req.size))
		u.stopping = true
		return
	}
	k.checked(u.bufs[ud][:s.req.size], s.req)
	k.rec.record(s.req.write, s.req.size, s.submit, u.done)
}
