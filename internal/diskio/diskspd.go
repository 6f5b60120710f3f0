package diskio

import (
	"strconv"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/units"
)

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
	p := &diskspdParse{c: &DiskSpdCommand{Workload: Workload{BlockSizes: []int64{diskspdBlock}, Threads: 1, QD: diskspdQD,
		Duration: diskspdDuration, Warmup: diskspdWarmup, Engine: EngineAuto, Seed: 1}}, stride: -1}
	for _, a := range args {
		if !strings.HasPrefix(a, "-") || a == "-" {
			p.target(a)
			continue
		}
		name, val := a[1:2], a[2:]
		if strings.HasPrefix(a, "-si") {
			name, val = "si", a[3:]
		}
		if !p.sizeSwitch(name, val) && !p.countSwitch(name, val) && !p.modeSwitch(name, val) {
			p.bad("%s: switch not supported (supported: -b -o -t -w -r -s -si -S -Sh -L -d -W -C -c -g)", a)
		}
	}
	p.finish()
	if err := agerr.Join(p.errs...); err != nil {
		return nil, err
	}
	return p.c, nil
}

// diskspdParse is a DiskSpd command line being read: the command so far, every problem
// found, and the switches read only once all are known (-s's stride, -g's rate).
type diskspdParse struct {
	c          *DiskSpdCommand
	errs       []error
	gPerThread string
	stride     int64
}

func (p *diskspdParse) bad(format string, a ...any) {
	p.errs = append(p.errs, agerr.BadInputf("DiskSpd "+format, a...))
}

// target takes the target file; DiskSpd's several targets are not supported.
func (p *diskspdParse) target(a string) {
	if p.c.Path != "" {
		p.bad("target %q: only one target file is supported (already %q)", a, p.c.Path)
		return
	}
	p.c.Path = a
}

// size reads a positive size, or says what is wrong with it.
func (p *diskspdParse) size(val, format string) (int64, bool) {
	n, err := units.ParseBytes(val)
	if err != nil || n <= 0 {
		p.bad(format, val)
		return 0, false
	}
	return n, true
}

// sizeSwitch reads the switches of sizes and offsets: -b, -r, -s, -si and -c.
func (p *diskspdParse) sizeSwitch(name, val string) bool {
	w := &p.c.Workload
	switch name {
	case "b":
		if n, ok := p.size(val, "-b%s: block size must be a positive size like 4K or 128K"); ok {
			w.BlockSizes = []int64{n}
		}
	case "r":
		w.Random = true
		if val != "" {
			if n, ok := p.size(val, "-r%s: alignment must be a positive size"); ok {
				w.Align = n
			}
		}
	case "s", "si":
		w.Random = false
		if name == "si" {
			w.SharedSequential = true
		}
		if val != "" {
			if n, ok := p.size(val, "-"+name+"%s: stride must be a positive size"); ok {
				p.stride = n
			}
		}
	case "c":
		if n, ok := p.size(val, "-c%s: file size must be a positive size like 1G"); ok {
			p.c.CreateSize = n
		}
	default:
		return false
	}
	return true
}

// countSwitch reads the switches of counts and times: -o, -t, -w, -d, -W, -C and -g.
func (p *diskspdParse) countSwitch(name, val string) bool {
	w := &p.c.Workload
	switch name {
	case "o":
		w.QD = diskspdInt(val, "-o", 1, MaxQD, p.bad)
	case "t":
		w.Threads = diskspdInt(val, "-t", 1, MaxThreads, p.bad)
	case "w":
		w.WritePct = diskspdInt(val, "-w", 0, 100, p.bad)
	case "d":
		w.Duration = time.Duration(diskspdInt(val, "-d", 1, 1<<31, p.bad)) * time.Second
	case "W":
		w.Warmup = time.Duration(diskspdInt(val, "-W", 0, 1<<31, p.bad)) * time.Second
	case "C":
		diskspdInt(val, "-C", 0, 1<<31, p.bad)
		p.c.Notes = append(p.c.Notes, "-C: no cool-down is needed; IO after the window is drained, not counted")
	case "g":
		p.gPerThread = val
	default:
		return false
	}
	return true
}

// modeSwitch reads the switches of caching and latency: -S, -h and -L.
func (p *diskspdParse) modeSwitch(name, val string) bool {
	w := &p.c.Workload
	switch name {
	case "S":
		diskspdCache(w, val, p.bad)
	case "h":
		if val != "" {
			p.bad("-h%s: unknown switch", val)
		}
		w.Direct, w.Dsync = true, true
	case "L":
		if val != "" {
			p.bad("-L%s: unknown switch", val)
		}
		p.c.Notes = append(p.c.Notes, "-L: latency is always measured")
	default:
		return false
	}
	return true
}

// finish checks the target and applies what needs every switch read: -s's stride against
// the block size, and -g's rate per thread.
func (p *diskspdParse) finish() {
	c, w := p.c, &p.c.Workload
	if c.Path == "" {
		p.bad("target: a target file is needed, e.g. testfile.dat")
	} else if strings.HasPrefix(c.Path, "#") || strings.HasPrefix(c.Path, `\\.\`) {
		p.bad("target %q: physical drives are not supported; give a file", c.Path)
	}
	if p.stride >= 0 && len(w.BlockSizes) == 1 && p.stride != w.BlockSizes[0] {
		p.bad("-s%s: only a stride equal to the block size is supported", units.FormatBytesExact(p.stride))
	}
	if p.gPerThread != "" && len(w.BlockSizes) == 1 {
		if v, ok := strings.CutSuffix(p.gPerThread, "i"); ok {
			n := diskspdInt(v, "-g", 1, 1<<31, p.bad)
			w.Rate = float64(n * w.Threads)
		} else {
			// DiskSpd's -g is bytes per millisecond per thread.
			n := diskspdInt(p.gPerThread, "-g", 1, 1<<40, p.bad)
			w.Rate = float64(n) * 1000 / float64(w.BlockSizes[0]) * float64(w.Threads)
		}
	}
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
