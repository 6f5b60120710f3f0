package diskio

import (
	"strings"
	"testing"
	"time"
	"unsafe"
)

func testLayout(region int64, w *Workload) layout {
	return newLayout(&TestFile{Size: HeaderSize + region, DataStart: HeaderSize}, w)
}

func TestRandomOffsetsAlignedAndInside(t *testing.T) {
	w := Workload{BlockSizes: []int64{8 << 10, 64 << 10}, Align: 8 << 10, Random: true, WritePct: 30}
	region := int64(1<<20 + 5000) // not a multiple of anything
	l := testLayout(region, &w)
	p := newPicker(&w, l, 7, &seqStream{})
	writes, seen := 0, map[int64]bool{}
	const n = 20000
	for i := 0; i < n; i++ {
		r := p.next()
		if r.off%w.Align != 0 {
			t.Fatalf("offset %d not aligned to %d", r.off, w.Align)
		}
		if r.off < HeaderSize || r.off+r.size > HeaderSize+region {
			t.Fatalf("IO [%d,%d) outside the data region", r.off, r.off+r.size)
		}
		if r.write {
			writes++
		}
		seen[r.off] = true
	}
	// 30% writes, within a few points; offsets spread over all 128 8K slots.
	if writes < n*27/100 || writes > n*33/100 {
		t.Fatalf("%d writes of %d, want about 30%%", writes, n)
	}
	if len(seen) != 128 {
		t.Fatalf("%d distinct offsets, want 128", len(seen))
	}
}

func TestSequentialOffsetsPerThreadAndWrap(t *testing.T) {
	w := Workload{BlockSizes: []int64{4096}, Threads: 2}
	l := testLayout(16*4096, &w)
	s0 := &seqStream{base: threadBase(l, 0, 2)}
	s1 := &seqStream{base: threadBase(l, 1, 2)}
	p0, p1 := newPicker(&w, l, 1, s0), newPicker(&w, l, 2, s1)
	for i := 0; i < 20; i++ {
		want0 := HeaderSize + int64(i%16)*4096
		want1 := HeaderSize + int64((i+8)%16)*4096
		if r := p0.next(); r.off != want0 || r.write {
			t.Fatalf("thread 0 IO %d at %d, want %d", i, r.off, want0)
		}
		if r := p1.next(); r.off != want1 {
			t.Fatalf("thread 1 IO %d at %d, want %d", i, r.off, want1)
		}
	}
	// Large blocks start at a multiple of their size, not straight after the 4K header.
	big := Workload{BlockSizes: []int64{128 << 10}}
	if r := newPicker(&big, testLayout(1<<20, &big), 1, &seqStream{}).next(); r.off != 128<<10 {
		t.Fatalf("first 128K IO at %d", r.off)
	}
	// A shared stream (-si) hands consecutive blocks to whoever asks next.
	shared := &seqStream{}
	a, b := newPicker(&w, l, 1, shared), newPicker(&w, l, 2, shared)
	if x, y, z := a.next().off, b.next().off, a.next().off; x != HeaderSize || y != HeaderSize+4096 || z != HeaderSize+8192 {
		t.Fatalf("shared stream %d %d %d", x, y, z)
	}
}

func TestRecorderCountsOnlyTheWindow(t *testing.T) {
	win := &window{}
	win.start.Store(1000)
	win.end.Store(1000 + 3*int64(time.Second))
	r := newRecorder(0, win, 3)
	r.record(false, 4096, 999, 2000)                    // submitted in warm-up: not counted
	r.record(false, 4096, 1000, 1500)                   // counted, second 0
	r.record(true, 8192, 2000, 2000+int64(time.Second)) // counted, second 1
	r.record(false, 4096, 1000, win.end.Load()+1)       // completed after the window
	if r.all != 4 || r.ios != [2]int64{1, 1} || r.bytes != [2]int64{4096, 8192} {
		t.Fatalf("all %d ios %v bytes %v", r.all, r.ios, r.bytes)
	}
	if r.perSec[0] != 1 || r.perSec[1] != 1 || r.hist[0].TotalCount() != 1 || r.hist[1].TotalCount() != 1 {
		t.Fatalf("perSec %v", r.perSec)
	}
	res := buildResult(Workload{Threads: 1, QD: 1}, EngineSync, []*recorder{r}, 2*time.Second, true)
	if res.Total.IOs != 2 || res.Total.Bytes != 12288 || res.Read.IOPS != 0.5 || res.Total.Hist.TotalCount() != 2 {
		t.Fatalf("%+v", res.Total)
	}
	if got := res.Write.At(50); got < 999e3 || got > 1001e3 { // 1 s within HDR's 3 digits
		t.Fatalf("write p50 %v us", got)
	}
}

func TestStddev(t *testing.T) {
	if s := stddev([]int64{10, 10, 10}); s != 0 {
		t.Fatal(s)
	}
	if s := stddev([]int64{8, 12}); s < 2.828 || s > 2.829 {
		t.Fatal(s)
	}
}

func TestSweep(t *testing.T) {
	s, err := ParseSweep("qd=1,2,4")
	if err != nil || s.Key != "qd" || len(s.Values) != 3 {
		t.Fatalf("%+v %v", s, err)
	}
	if w := s.Apply(Workload{QD: 1, Threads: 3}, 4); w.QD != 4 || w.Threads != 3 {
		t.Fatalf("%+v", w)
	}
	for _, bad := range []string{"depth=1", "qd=", "qd=0", "threads=1,x", "qd"} {
		if _, err := ParseSweep(bad); err == nil {
			t.Errorf("ParseSweep(%q) accepted", bad)
		}
	}
}

func TestUringLayouts(t *testing.T) {
	if unsafe.Sizeof(uringSqe{}) != 64 || unsafe.Sizeof(uringCqe{}) != 16 || unsafe.Sizeof(uringParams{}) != 120 ||
		unsafe.Sizeof(uringGeteventsArg{}) != 24 || unsafe.Offsetof(uringSqe{}.userData) != 32 || unsafe.Offsetof(uringSqe{}.bufIndex) != 40 {
		t.Fatal("io_uring structures do not match the kernel's layout")
	}
}

func TestWorkloadValidate(t *testing.T) {
	w := Workload{BlockSizes: []int64{1000, 128 << 20}, Threads: 0, QD: 0, WritePct: 101, Duration: 0, Warmup: -1, Engine: "aio", Direct: true, Rate: -1}
	err := CheckWorkload(&w)
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{"--block-size 1000", "--block-size 128M", "--threads", "--qd", "--write", "--duration", "--warmup", "--engine", "--rate"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("no %q in %v", want, err)
		}
	}
	huge := Workload{BlockSizes: []int64{64 << 20}, Threads: 64, QD: 64, Duration: 1, Engine: EngineAuto}
	if err := CheckWorkload(&huge); err == nil || !strings.Contains(err.Error(), "IO buffers") {
		t.Errorf("64 x 64 x 64M of buffers: %v", err)
	}
	for _, n := range PresetNames() {
		w := DefaultWorkload()
		p, _ := LookupPreset(n)
		p.Apply(&w)
		if err := CheckWorkload(&w); err != nil {
			t.Errorf("preset %s: %v", n, err)
		}
	}
}
