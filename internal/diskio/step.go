package diskio

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/proc"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/sample"
	"github.com/agbench/agbench/internal/units"
)

// StepOptions are the surroundings of a step.
type StepOptions struct {
	// Kernel is where the OS counters are read: the machine's (the zero FS) outside tests.
	Kernel proc.FS
	// Gen is the verify generation stamped into written blocks.
	Gen uint64
}

// openFlags returns the open(2) flags for w.
func openFlags(w *Workload) int {
	fl := unix.O_RDONLY
	if w.Writes() {
		fl = unix.O_RDWR
	}
	if w.Direct {
		fl |= unix.O_DIRECT
	}
	if w.Dsync {
		fl |= unix.O_DSYNC
	}
	return fl | unix.O_CLOEXEC
}

// ResolveEngine resolves "auto": io_uring when a ring can be set up here, else sync. Asking
// for io_uring where it cannot run is bad input.
func ResolveEngine(want string) (string, error) {
	if want == EngineSync {
		return EngineSync, nil
	}
	r, err := newRing(1)
	if err == nil {
		r.close()
		return EngineUring, nil
	}
	if want == EngineUring {
		return "", agerr.BadInputf("--engine io_uring: not available here (%v)", err)
	}
	return EngineSync, nil
}

// RunStep runs one workload against the test file: warm-up, then the measured window,
// while the device's counters, IO pressure and CPU are read at the window's edges.
// Cancelling ctx ends the window early; what was measured is kept and marked incomplete.
// With a count of IOs (w.IOs) the window ends once that many completed in it, or at
// w.Duration, then marked cut short.
func RunStep(ctx context.Context, t *TestFile, w Workload, o StepOptions) (*StepResult, error) {
	if err := CheckWorkload(&w); err != nil {
		return nil, err
	}
	l := newLayout(t, &w)
	if l.span < w.MaxBlock() {
		return nil, agerr.BadInputf("--block-size %s is larger than the test file's %s of data", units.FormatBytesExact(w.MaxBlock()), units.FormatBytesExact(t.RegionLen()))
	}
	engine, err := ResolveEngine(w.Engine)
	if err != nil {
		return nil, err
	}
	fd, err := openStepFile(t, &w)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)

	st := newStepTimes(&w)
	var bufs [][]byte
	defer func() {
		for _, b := range bufs {
			freeBuffer(b)
		}
	}()
	workers, recs, err := makeWorkers(&w, l, fd, st, engine, o, &bufs)
	if err != nil {
		return nil, err
	}
	wait := startWorkers(workers, engine)
	m := measure(ctx, t.Path, o, st)
	uringErrs := wait()
	if err := workerErrors(uringErrs, recs); err != nil {
		return nil, err
	}
	res := buildResult(w, engine, recs, m.measured, m.complete)
	res.CutShort = m.complete && w.IOs > 0 && res.Total.IOs < w.IOs
	res.Start = st.clk.epoch.Add(time.Duration(st.win.start.Load())).UTC()
	var notes []string
	res.Device, res.Pressure, res.CPU, notes = m.osw.views(res.Total.IOs)
	checkStep(res)
	res.Warnings = append(res.Warnings, notes...)
	if m.seriesErr == nil {
		res.OSSeries, res.OSCounters = m.rs.Series, m.rs.Counters
	}
	return res, nil
}

// openStepFile opens the test file as the workload reads and writes it.
func openStepFile(t *TestFile, w *Workload) (int, error) {
	fd, err := unix.Open(t.Path, openFlags(w), 0)
	if err != nil {
		if errors.Is(err, unix.EINVAL) && w.Direct {
			return -1, agerr.BadInputf("%s: the filesystem refuses O_DIRECT; run with --direct=false (measures the page cache)", t.Path)
		}
		return -1, fmt.Errorf("open %s: %w", t.Path, err)
	}
	if !w.Direct {
		// A buffered run starts from a cold cache for this file; it measures the page cache.
		unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED)
	}
	return fd, nil
}

// stepTimes are a step's clock and window: when the window is planned to open and close
// (nanoseconds on the clock), and the window the workers record into.
type stepTimes struct {
	clk                      clock
	win                      *window
	plannedStart, plannedEnd int64
	seconds                  int
}

func newStepTimes(w *Workload) stepTimes {
	// Workers start within a few ms; the window opens after the warm-up, when the
	// coordinator (measure) reads the counters.
	st := stepTimes{clk: clock{epoch: time.Now()}, win: &window{}, seconds: int(w.Duration/time.Second) + 1}
	st.plannedStart = int64(w.Warmup) + int64(20*time.Millisecond)
	st.plannedEnd = st.plannedStart + int64(w.Duration)
	st.win.start.Store(math.MaxInt64)
	st.win.end.Store(st.plannedEnd)
	if w.IOs > 0 {
		st.win.target, st.win.reached = w.IOs, make(chan struct{})
	}
	return st
}

// makeWorkers makes the step's workers, each with its IO buffer (added to bufs, to be
// freed by the caller) and its recorder.
func makeWorkers(w *Workload, l layout, fd int, st stepTimes, engine string, o StepOptions, bufs *[][]byte) ([]*worker, []*recorder, error) {
	// io_uring keeps a thread's QD in flight on one ring; the sync engine needs one
	// goroutine per outstanding IO.
	perThread, qd := 1, w.QD
	if engine == EngineSync {
		perThread, qd = w.QD, 1
	}
	goroutines := w.Threads * perThread
	var period int64
	if w.Rate > 0 {
		period = int64(float64(time.Second) * float64(goroutines) / w.Rate)
	}
	var shared *seqStream
	if w.SharedSequential {
		shared = &seqStream{}
	}
	workers := make([]*worker, 0, goroutines)
	recs := make([]*recorder, 0, goroutines)
	wr := newRand(w.Seed ^ 0x5eed)
	for th := 0; th < w.Threads; th++ {
		seq := shared
		if seq == nil {
			seq = &seqStream{base: threadBase(l, th, w.Threads)}
		}
		for q := 0; q < perThread; q++ {
			idx := len(workers)
			buf, err := alignedBuffer(int(int64(qd) * w.MaxBlock()))
			if err != nil {
				return nil, nil, fmt.Errorf("IO buffers: %w", err)
			}
			*bufs = append(*bufs, buf)
			fillRandom(buf, &wr)
			rec := newRecorder(th, st.win, st.seconds)
			k := &worker{w: w, fd: fd, clk: st.clk, win: st.win, rec: rec, qd: qd, buf: buf, block: w.MaxBlock(),
				pick:   newPicker(w, l, w.Seed*1000003+uint64(idx), seq),
				period: period, unit: w.Alignment(), gen: o.Gen, checkReads: w.Verify && !w.Writes()}
			if period > 0 {
				k.phase = period * int64(idx) / int64(goroutines)
			}
			workers = append(workers, k)
			recs = append(recs, rec)
		}
	}
	return workers, recs, nil
}

// startWorkers runs every worker on its engine and returns the function that waits for
// them all and gives each io_uring worker's error.
func startWorkers(workers []*worker, engine string) func() []error {
	var wg sync.WaitGroup
	uringErrs := make([]error, len(workers))
	for i, k := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if engine == EngineUring {
				uringErrs[i] = k.runUring()
			} else {
				k.runSync()
			}
		}()
	}
	return func() []error { wg.Wait(); return uringErrs }
}

// workerErrors is the step's failure: an io_uring engine's, or every IO error recorded.
func workerErrors(uringErrs []error, recs []*recorder) error {
	for _, e := range uringErrs {
		if e != nil {
			return fmt.Errorf("io_uring engine: %w", e)
		}
	}
	var errs []error
	for _, r := range recs {
		if r.err != nil {
			errs = append(errs, r.err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("IO failed: %w", errors.Join(errs...))
	}
	return nil
}

// measured is what the coordinator saw of a step's window: its length, whether it ran to
// its end, the kernel's counters at its edges and the per-second series beside them.
type measured struct {
	measured  time.Duration
	complete  bool
	osw       *osWindow
	rs        result.Step
	seriesErr error
}

// measure coordinates the window: it waits out the warm-up, reads the kernel's counters
// and opens the window, waits for its end (the duration, the count of IOs, or ctx), then
// closes it and reads the counters again.
func measure(ctx context.Context, path string, o StepOptions, st stepTimes) *measured {
	m := &measured{complete: true, osw: newOSWindow(path, o)}
	// Per-second series of the device, CPU and PSI beside the edge readings, for the report.
	series, seriesErr := sample.NewOSStep(sample.OSConfig{Paths: []string{path}, Kernel: o.Kernel}, 0)
	started := false
	openSeries := func() {
		if seriesErr == nil {
			m.rs.Window.Start = time.Now()
			seriesErr = series.Start(ctx, &m.rs)
			started = seriesErr == nil
		}
	}
	// The window's edges are set at the instants the kernel's counters are read, the
	// counters' window around the tester's: read before the start is marked and after the
	// end is. (Marked first, a coordinator held back between the two on a loaded machine
	// left the device's view without the IO of the start of the window: 0.88 of the
	// tester's bytes with 70 ms, 0.37 with 400 ms.)
	if st.waitUntil(ctx, st.plannedStart) {
		m.osw.open()
		st.win.start.Store(st.clk.now())
		openSeries()
		m.complete = st.waitUntil(ctx, st.plannedEnd)
	} else {
		m.complete = false
		m.osw.open()
		st.win.start.Store(st.clk.now())
	}
	st.win.end.Store(st.clk.now())
	m.osw.close()
	if started {
		seriesErr = series.Stop(ctx, &m.rs)
	}
	m.seriesErr = seriesErr
	m.measured = time.Duration(st.win.end.Load() - st.win.start.Load())
	return m
}

// waitUntil waits until the clock reads until, or the count of IOs was reached; false when
// ctx ended first.
func (st stepTimes) waitUntil(ctx context.Context, until int64) bool {
	d := time.Duration(until - st.clk.now())
	if d <= 0 {
		return true
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-st.win.reached: // nil, never ready, without a count of IOs
		return true
	case <-ctx.Done():
		return false
	}
}
