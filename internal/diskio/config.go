package diskio

import (
	"fmt"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/units"
)

// Engine names.
const (
	EngineAuto  = "auto"
	EngineUring = "io_uring"
	EngineSync  = "sync"
)

// Limits on what one step may ask for.
const (
	MaxThreads    = 1024
	MaxQD         = 4096
	MaxBlockSize  = 64 << 20
	minDirectUnit = 512
	// MaxBufferBytes caps the IO buffers of a step (threads x QD x largest block).
	MaxBufferBytes = 4 << 30
	// DefaultFileSize is the size of a test file when neither --size nor the file says.
	DefaultFileSize = 1 << 30
)

// Workload is the IO shape of one step: what each thread issues and how often.
type Workload struct {
	// BlockSizes are the IO sizes in bytes; with several, each IO picks one at random.
	BlockSizes []int64 `json:"block_sizes"`
	// Align is the offset alignment of random IOs; 0 means the smallest block size.
	Align    int64 `json:"align"`
	Threads  int   `json:"threads"`
	QD       int   `json:"qd"`
	WritePct int   `json:"write_pct"`
	Random   bool  `json:"random"`
	// SharedSequential makes all threads walk one sequential stream (DiskSpd -si).
	SharedSequential bool `json:"shared_sequential,omitempty"`
	// Direct opens the file with O_DIRECT (bypasses the page cache).
	Direct bool `json:"direct"`
	// Dsync makes every write durable before it completes (O_DSYNC / RWF_DSYNC).
	Dsync bool `json:"dsync,omitempty"`
	// Rate is the total IOPS to issue, 0 for as fast as the queue allows.
	Rate     float64       `json:"rate,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	Warmup   time.Duration `json:"warmup_ns"`
	// IOs ends the window once this many IOs (all threads together) completed in it, the
	// Duration then an upper bound (fio's number_ios); 0 ends it by Duration alone.
	IOs    int64  `json:"ios,omitempty"`
	Engine string `json:"engine"`
	Seed   uint64 `json:"seed"`
	// Verify checks a checksum in every block read and stamps every block written.
	Verify bool `json:"verify,omitempty"`
}

// DefaultWorkload is the single-thread baseline of the storage article: 128K reads, one
// thread, one outstanding IO, caches off, sequential, 60 s after 5 s of warm-up.
func DefaultWorkload() Workload {
	return Workload{BlockSizes: []int64{128 << 10}, Threads: 1, QD: 1, Direct: true,
		Duration: 60 * time.Second, Warmup: 5 * time.Second, Engine: EngineAuto, Seed: 1}
}

// MaxBlock is the largest block size.
func (w *Workload) MaxBlock() int64 {
	var m int64
	for _, b := range w.BlockSizes {
		m = max(m, b)
	}
	return m
}

// MinBlock is the smallest block size.
func (w *Workload) MinBlock() int64 {
	var m int64
	for i, b := range w.BlockSizes {
		if i == 0 || b < m {
			m = b
		}
	}
	return m
}

// Alignment is the effective offset alignment.
func (w *Workload) Alignment() int64 {
	if w.Align > 0 {
		return w.Align
	}
	return w.MinBlock()
}

// Outstanding is the number of IOs kept in flight (threads x queue depth).
func (w *Workload) Outstanding() int { return w.Threads * w.QD }

// Writes reports whether the workload writes into the file.
func (w *Workload) Writes() bool { return w.WritePct > 0 }

// Describe is a one-line summary such as "4K random read, 1 thread x QD 16, direct".
func (w *Workload) Describe() string {
	var bs []string
	for _, b := range w.BlockSizes {
		bs = append(bs, units.FormatBytesExact(b))
	}
	pat := "sequential"
	if w.Random {
		pat = "random"
	} else if w.SharedSequential {
		pat = "shared-sequential"
	}
	mix := "read"
	switch {
	case w.WritePct == 100:
		mix = "write"
	case w.WritePct > 0:
		mix = fmt.Sprintf("%d/%d read/write", 100-w.WritePct, w.WritePct)
	}
	cache := "direct"
	if !w.Direct {
		cache = "buffered (page cache)"
	}
	if w.Dsync {
		cache += ", dsync"
	}
	s := fmt.Sprintf("%s %s %s, %d thread(s) x QD %d, %s", strings.Join(bs, "/"), pat, mix, w.Threads, w.QD, cache)
	if w.Rate > 0 {
		s += fmt.Sprintf(", rate %.0f IOPS", w.Rate)
	}
	if w.IOs > 0 {
		s += fmt.Sprintf(", until %d IOs", w.IOs)
	}
	return s
}

// Validate reports every problem with w at once, as bad input naming the flag.
func (w *Workload) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, agerr.BadInputf(format, a...)) }
	if len(w.BlockSizes) == 0 {
		bad("--block-size: at least one block size is needed")
	}
	for _, b := range w.BlockSizes {
		switch {
		case b <= 0:
			bad("--block-size %d: must be positive", b)
		case b > MaxBlockSize:
			bad("--block-size %s: at most %s", units.FormatBytesExact(b), units.FormatBytesExact(MaxBlockSize))
		case w.Direct && b%minDirectUnit != 0:
			bad("--block-size %d: direct IO needs a multiple of %d bytes", b, minDirectUnit)
		}
	}
	if w.Align < 0 || (w.Align > 0 && w.Direct && w.Align%minDirectUnit != 0) {
		bad("--align %d: must be a positive multiple of %d bytes with direct IO", w.Align, minDirectUnit)
	}
	if w.Threads < 1 || w.Threads > MaxThreads {
		bad("--threads %d: must be between 1 and %d", w.Threads, MaxThreads)
	}
	if w.QD < 1 || w.QD > MaxQD {
		bad("--qd %d: must be between 1 and %d", w.QD, MaxQD)
	}
	if w.WritePct < 0 || w.WritePct > 100 {
		bad("--write %d: a percentage of writes, 0 to 100", w.WritePct)
	}
	if w.Rate < 0 {
		bad("--rate %g: must be 0 (unlimited) or a positive IOPS figure", w.Rate)
	}
	if w.Duration <= 0 {
		bad("--duration %s: must be positive", w.Duration)
	}
	if w.IOs < 0 {
		bad("--ios %d: must be 0 (end by --duration) or a positive number of IOs", w.IOs)
	}
	if w.Warmup < 0 {
		bad("--warmup %s: must not be negative", w.Warmup)
	}
	switch w.Engine {
	case EngineAuto, EngineUring, EngineSync:
	default:
		bad("--engine %q: one of auto, io_uring, sync", w.Engine)
	}
	if w.Threads > 0 && w.QD > 0 && int64(w.Threads)*int64(w.QD)*w.MaxBlock() > MaxBufferBytes {
		bad("--threads %d x --qd %d x --block-size %s needs %s of IO buffers; at most %s", w.Threads, w.QD, units.FormatBytesExact(w.MaxBlock()),
			units.FormatBytesExact(int64(w.Threads)*int64(w.QD)*w.MaxBlock()), units.FormatBytesExact(MaxBufferBytes))
	}
	if w.Random && w.SharedSequential {
		bad("--shared-sequential: only for sequential patterns")
	}
	return agerr.Join(errs...)
}
