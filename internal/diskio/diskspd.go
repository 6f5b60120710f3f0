package diskio

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/units"
)

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

// DiskSpd's own defaults (DiskSpd's documentation, "Command line parameters").
const (
	diskspdBlock    = 64 << 10
	diskspdQD       = 2
	diskspdDuration = 10 * time.Second
	diskspdWarmup   = 5 * time.Second
)

// ParseDiskSpd reads DiskSpd's command-line syntax: -b -o -t -w -r -s -si -S[bhruw] -L -d
// -W -C -c -g and one target file, e.g. "-d60 -b128K -o1 -t1 -Sh -L -w0 -c1G test.dat".
// As in DiskSpd, IO is sequential unless -r, and cached unless -S; -Sh is O_DIRECT plus
// O_DSYNC (no software cache, write-through). Every problem is reported at once.
func ParseDiskSpd(args []string) (*DiskSpdCommand, error) {
	c := &DiskSpdCommand{Workload: Workload{BlockSizes: []int64{diskspdBlock}, Threads: 1, QD: diskspdQD,
		Duration: diskspdDuration, Warmup: diskspdWarmup, Engine: EngineAuto, Seed: 1}}
	w := &c.Workload
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, agerr.BadInputf("DiskSpd "+format, a...))
	}
	var gPerThread string
	stride := int64(-1)
	for _, a := range args {
		if !strings.HasPrefix(a, "-") || a == "-" {
			if c.Path != "" {
				bad("target %q: only one target file is supported (already %q)", a, c.Path)
				continue
			}
			c.Path = a
			continue
		}
		name, val := a[1:2], a[2:]
		if strings.HasPrefix(a, "-si") {
			name, val = "si", a[3:]
		}
		switch name {
		case "b":
			if n, err := units.ParseBytes(val); err != nil || n <= 0 {
				bad("-b%s: block size must be a positive size like 4K or 128K", val)
			} else {
				w.BlockSizes = []int64{n}
			}
		case "o":
			w.QD = diskspdInt(val, "-o", 1, MaxQD, bad)
		case "t":
			w.Threads = diskspdInt(val, "-t", 1, MaxThreads, bad)
		case "w":
			w.WritePct = diskspdInt(val, "-w", 0, 100, bad)
		case "r":
			w.Random = true
			if val != "" {
				if n, err := units.ParseBytes(val); err != nil || n <= 0 {
					bad("-r%s: alignment must be a positive size", val)
				} else {
					w.Align = n
				}
			}
		case "s":
			w.Random = false
			if val != "" {
				if n, err := units.ParseBytes(val); err != nil || n <= 0 {
					bad("-s%s: stride must be a positive size", val)
				} else {
					stride = n
				}
			}
		case "si":
			w.Random, w.SharedSequential = false, true
			if val != "" {
				if n, err := units.ParseBytes(val); err != nil || n <= 0 {
					bad("-si%s: stride must be a positive size", val)
				} else {
					stride = n
				}
			}
		case "S":
			diskspdCache(w, val, bad)
		case "h":
			if val != "" {
				bad("-h%s: unknown switch", val)
			}
			w.Direct, w.Dsync = true, true
		case "L":
			if val != "" {
				bad("-L%s: unknown switch", val)
			}
			c.Notes = append(c.Notes, "-L: latency is always measured")
		case "d":
			w.Duration = time.Duration(diskspdInt(val, "-d", 1, 1<<31, bad)) * time.Second
		case "W":
			w.Warmup = time.Duration(diskspdInt(val, "-W", 0, 1<<31, bad)) * time.Second
		case "C":
			diskspdInt(val, "-C", 0, 1<<31, bad)
			c.Notes = append(c.Notes, "-C: no cool-down is needed; IO after the window is drained, not counted")
		case "c":
			if n, err := units.ParseBytes(val); err != nil || n <= 0 {
				bad("-c%s: file size must be a positive size like 1G", val)
			} else {
				c.CreateSize = n
			}
		case "g":
			gPerThread = val
		default:
			bad("%s: switch not supported (supported: -b -o -t -w -r -s -si -S -Sh -L -d -W -C -c -g)", a)
		}
	}
	if c.Path == "" {
		bad("target: a target file is needed, e.g. testfile.dat")
	} else if strings.HasPrefix(c.Path, "#") || strings.HasPrefix(c.Path, `\\.\`) {
		bad("target %q: physical drives are not supported; give a file", c.Path)
	}
	if stride >= 0 && len(w.BlockSizes) == 1 && stride != w.BlockSizes[0] {
		bad("-s%s: only a stride equal to the block size is supported", units.FormatBytesExact(stride))
	}
	if gPerThread != "" && len(w.BlockSizes) == 1 {
		if v, ok := strings.CutSuffix(gPerThread, "i"); ok {
			n := diskspdInt(v, "-g", 1, 1<<31, bad)
			w.Rate = float64(n * w.Threads)
		} else {
			// DiskSpd's -g is bytes per millisecond per thread.
			n := diskspdInt(gPerThread, "-g", 1, 1<<40, bad)
			w.Rate = float64(n) * 1000 / float64(w.BlockSizes[0]) * float64(w.Threads)
		}
	}
	if err := agerr.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

func diskspdInt(v, flag string, lo, hi int, bad func(string, ...any)) int {
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		bad("%s%s: must be a whole number from %d to %d", flag, v, lo, hi)
		return lo
	}
	return n
}

// diskspdCache reads -S's letters: none or u = no software cache (O_DIRECT), b = cached,
// w = write-through (O_DSYNC), h = both u and w; r (remote cache) has no Linux analogue.
func diskspdCache(w *Workload, val string, bad func(string, ...any)) {
	if val == "" {
		w.Direct = true
		return
	}
	for _, ch := range val {
		switch ch {
		case 'u':
			w.Direct = true
		case 'b':
			w.Direct = false
		case 'w':
			w.Dsync = true
		case 'h':
			w.Direct, w.Dsync = true, true
		case 'r':
			w.Direct = true
		default:
			bad("-S%s: unknown cache letter %q (b, h, r, u, w)", val, string(ch))
		}
	}
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
