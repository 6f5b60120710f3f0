package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// CPUTicks is one "cpu" line of /proc/stat (the machine's, or one CPU's), in clock ticks
// (UserHZ) since boot. Guest time is already inside User and Nice, so it is not kept.
// Kernels before 2.6.11 lack steal; the fields a line lacks stay zero.
type CPUTicks struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
}

// Total is all the time the line counts.
func (t CPUTicks) Total() uint64 {
	return t.User + t.Nice + t.System + t.Idle + t.IOWait + t.IRQ + t.SoftIRQ + t.Steal
}

// Add sums two lines field by field.
func (t CPUTicks) Add(u CPUTicks) CPUTicks {
	return CPUTicks{t.User + u.User, t.Nice + u.Nice, t.System + u.System, t.Idle + u.Idle,
		t.IOWait + u.IOWait, t.IRQ + u.IRQ, t.SoftIRQ + u.SoftIRQ, t.Steal + u.Steal}
}

// CPUStat is what agbench keeps of /proc/stat: the machine's "cpu" line and each CPU's
// ("cpu0", "cpu1", …) by CPU number, and the tasks running or runnable at the read
// (procs_running, what node_exporter gives as node_procs_running); Running is -1 when the
// file has no such line.
type CPUStat struct {
	All     CPUTicks
	CPUs    map[int]CPUTicks
	Running int
}

// CPUStat reads /proc/stat.
//
// Not procfs's Stat: it gives the times in seconds (float64, divided by USER_HZ), where
// agbench compares whole ticks (a busy share of two readings must be exact at any
// uptime), and it fails on any line it does not know (intr, softirq, …) that agbench never
// reads.
func (f FS) CPUStat() (CPUStat, error) {
	data, err := os.ReadFile(f.Proc("stat"))
	if err != nil {
		return CPUStat{}, err
	}
	return ParseCPUStat(data)
}

// ParseCPUStat reads the "cpu" lines of the text of /proc/stat; other lines are skipped.
// The machine's line is required.
func ParseCPUStat(data []byte) (CPUStat, error) {
	s := CPUStat{CPUs: map[int]CPUTicks{}, Running: -1}
	found := false
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		f := bytes.Fields(line)
		if len(f) == 2 && string(f[0]) == "procs_running" {
			n, err := strconv.Atoi(string(f[1]))
			if err != nil || n < 0 {
				return s, fmt.Errorf("/proc/stat: procs_running %q is not a count", f[1])
			}
			s.Running = n
			continue
		}
		if len(f) == 0 || !bytes.HasPrefix(f[0], []byte("cpu")) {
			continue
		}
		if len(f[0]) == 3 {
			t, err := parseCPULine(f[1:])
			if err != nil {
				return s, fmt.Errorf("/proc/stat cpu %w", err)
			}
			s.All, found = t, true
			continue
		}
		cpu, err := strconv.Atoi(string(f[0][3:]))
		if err != nil || cpu < 0 {
			return s, fmt.Errorf("/proc/stat: %q is not a CPU", f[0])
		}
		t, err := parseCPULine(f[1:])
		if err != nil {
			return s, fmt.Errorf("/proc/stat %s: %w", f[0], err)
		}
		s.CPUs[cpu] = t
	}
	if !found {
		return s, fmt.Errorf("/proc/stat: no cpu line")
	}
	return s, nil
}

// parseCPULine reads the counters after a cpu line's name: at least user, nice, system and
// idle; up to steal is kept.
func parseCPULine(f [][]byte) (CPUTicks, error) {
	if len(f) < 4 {
		return CPUTicks{}, fmt.Errorf("line: %d fields, want at least 4 counters", len(f)+1)
	}
	var n [8]uint64
	for j := 0; j < len(n) && j < len(f); j++ {
		v, err := strconv.ParseUint(string(f[j]), 10, 64)
		if err != nil {
			return CPUTicks{}, fmt.Errorf("field %d: %q is not a counter", j+1, f[j])
		}
		n[j] = v
	}
	return CPUTicks{n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7]}, nil
}
