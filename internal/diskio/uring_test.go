package diskio

import (
	"errors"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestUringSubmitsEachIOOnItsOwn runs the io_uring engine at QD 8 on a real file and
// checks that every IO went to the kernel on its own io_uring_enter, refills included:
// handing a refill over in one batch kept the virtio disk here less busy than fio.
func TestUringSubmitsEachIOOnItsOwn(t *testing.T) {
	if testing.Short() {
		t.Skip("does real IO")
	}
	tf := newTestFile(t, 4<<20)
	w := Workload{BlockSizes: []int64{4096}, Threads: 1, QD: 8, Random: true, Direct: true, Engine: EngineUring, Seed: 5}
	fd, err := unix.Open(tf.Path, openFlags(&w), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	buf, err := alignedBuffer(int(int64(w.QD) * w.MaxBlock()))
	if err != nil {
		t.Fatal(err)
	}
	defer freeBuffer(buf)
	clk := clock{epoch: time.Now()}
	win := &window{}
	win.end.Store(int64(300 * time.Millisecond))
	rec := newRecorder(0, win, 1)
	k := &worker{w: &w, fd: fd, clk: clk, win: win, rec: rec, qd: w.QD, buf: buf, block: w.MaxBlock(),
		pick: newPicker(&w, newLayout(tf, &w), 5, &seqStream{}), unit: w.Alignment()}
	if err := k.runUring(); err != nil {
		var ue *UringError
		if errors.As(err, &ue) {
			t.Skipf("io_uring not available: %v", err)
		}
		t.Fatal(err)
	}
	if rec.err != nil {
		t.Fatal(rec.err)
	}
	// Every IO submitted completed before runUring returned (it drains the ring).
	if rec.all < int64(4*w.QD) {
		t.Fatalf("only %d IOs in 300ms: the queue was not refilled", rec.all)
	}
	if k.maxBatch != 1 || k.enters != rec.all {
		t.Fatalf("%d IOs went to the kernel in %d enters, up to %d at once; want one per enter", rec.all, k.enters, k.maxBatch)
	}
	if rec.ios[0] == 0 || rec.hist[0].TotalCount() != rec.ios[0] {
		t.Fatalf("window counted %d reads, histogram %d", rec.ios[0], rec.hist[0].TotalCount())
	}
}
