package diskrun

import (
	"fmt"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/units"
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

// Sweep walks one knob of the workload up the load curve.
type Sweep struct {
	// Key is "qd" or "threads".
	Key    string `json:"key"`
	Values []int  `json:"values"`
}

// Apply returns w with the sweep's knob set to v.
func (s *Sweep) Apply(w Workload, v int) Workload {
	switch s.Key {
	case "qd":
		w.QD = v
	case "threads":
		w.Threads = v
	}
	return w
}

// DiskSpdCommand is what a DiskSpd command line asks for.
type DiskSpdCommand struct {
	Workload Workload
	// Path is the target file.
	Path string
	// CreateSize is -c's size of data (0 when not given).
	CreateSize int64
	// Notes says which accepted switches change nothing here (e.g. -L: latency is always kept).
	Notes []string
}

// String writes the command back in DiskSpd's syntax.
func (c *DiskSpdCommand) String() string {
	w := c.Workload
	s := fmt.Sprintf("-d%d -W%d -b%s -o%d -t%d -w%d", int(w.Duration.Seconds()), int(w.Warmup.Seconds()), units.FormatBytesExact(w.MaxBlock()), w.QD, w.Threads, w.WritePct)
	if w.Random {
		s += " -r"
	} else if w.SharedSequential {
		s += " -si"
	}
	switch {
	case w.Direct && w.Dsync:
		s += " -Sh"
	case w.Direct:
		s += " -Su"
	case w.Dsync:
		s += " -Sw"
	}
	return s + " " + c.Path
}
