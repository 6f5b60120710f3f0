package diskio

import (
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

// DefaultWorkload is the single-thread baseline of the storage article: 128K reads, one
// thread, one outstanding IO, caches off, sequential, 60 s after 5 s of warm-up.
func DefaultWorkload() Workload {
	return Workload{BlockSizes: []int64{128 << 10}, Threads: 1, QD: 1, Direct: true,
		Duration: 60 * time.Second, Warmup: 5 * time.Second, Engine: EngineAuto, Seed: 1}
}

// CheckWorkload reports every problem with w at once, as bad input naming the flag.
func CheckWorkload(w *Workload) error {
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
