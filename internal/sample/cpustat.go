package sample

import (
	"bytes"
	"fmt"
	"strconv"
)

// CPUTicks is the machine-wide "cpu" line of /proc/stat, in clock ticks since boot.
// Guest time is already inside User and Nice, so it is not kept.
type CPUTicks struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
}

func (t CPUTicks) total() uint64 {
	return t.User + t.Nice + t.System + t.Idle + t.IOWait + t.IRQ + t.SoftIRQ + t.Steal
}

// ParseProcStat reads the aggregate "cpu" line and the number of per-CPU lines of
// /proc/stat. Kernels before 2.6.11 lack steal; those fields stay zero.
func ParseProcStat(data []byte) (CPUTicks, int, error) {
	var t CPUTicks
	found, ncpu := false, 0
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		f := bytes.Fields(line)
		if len(f) == 0 || !bytes.HasPrefix(f[0], []byte("cpu")) {
			continue
		}
		if len(f[0]) > 3 {
			ncpu++
			continue
		}
		if len(f) < 5 {
			return t, 0, fmt.Errorf("/proc/stat cpu line: %d fields, want at least 4 counters", len(f))
		}
		var n [8]uint64
		for j := 0; j < len(n) && j+1 < len(f); j++ {
			v, err := strconv.ParseUint(string(f[j+1]), 10, 64)
			if err != nil {
				return t, 0, fmt.Errorf("/proc/stat cpu field %d: %q is not a counter", j+1, f[j+1])
			}
			n[j] = v
		}
		t = CPUTicks{n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7]}
		found = true
	}
	if !found {
		return t, 0, fmt.Errorf("/proc/stat: no cpu line")
	}
	return t, ncpu, nil
}

// CPUShares are shares (0..1) of all CPU time of the machine over an interval.
type CPUShares struct {
	User   float64 `json:"user"` // user and nice
	System float64 `json:"system"`
	IOWait float64 `json:"iowait"`
	IRQ    float64 `json:"irq"` // hard and soft interrupts
	Steal  float64 `json:"steal"`
	Idle   float64 `json:"idle"`
}

// Busy is the share not idle, not waiting for IO and not stolen.
func (s CPUShares) Busy() float64 { return s.User + s.System + s.IRQ }

// CPUDelta turns two readings into shares of the interval's CPU time.
func CPUDelta(prev, cur CPUTicks) CPUShares {
	total := float64(sub(cur.total(), prev.total()))
	if total == 0 {
		return CPUShares{}
	}
	d := func(a, b uint64) float64 { return float64(sub(a, b)) / total }
	return CPUShares{
		User:   d(cur.User+cur.Nice, prev.User+prev.Nice),
		System: d(cur.System, prev.System),
		IOWait: d(cur.IOWait, prev.IOWait),
		IRQ:    d(cur.IRQ+cur.SoftIRQ, prev.IRQ+prev.SoftIRQ),
		Steal:  d(cur.Steal, prev.Steal),
		Idle:   d(cur.Idle, prev.Idle),
	}
}
