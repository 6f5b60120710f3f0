package seed

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

	"github.com/agbench/agbench/internal/proc"
)

// ProcCPU is a process's CPU time so far (its reaped children included).
type ProcCPU struct {
	UserSeconds, SystemSeconds float64
}

// Seconds is user plus system time.
func (c ProcCPU) Seconds() float64 { return c.UserSeconds + c.SystemSeconds }

// cpuOf is the CPU time of a process's stat line: its own and its reaped children's.
func cpuOf(s proc.Stat) ProcCPU {
	return ProcCPU{
		UserSeconds:   proc.Seconds(s.UTime + uint64(max(s.CUTime, 0))),
		SystemSeconds: proc.Seconds(s.STime + uint64(max(s.CSTime, 0))),
	}
}

// ProcIO is what /proc/PID/io counts: bytes through read/write calls (sockets and pipes
// included: rchar, wchar) and bytes that reached the block layer (read_bytes, write_bytes).
type ProcIO struct {
	RChar, WChar, ReadBytes, WriteBytes int64
}

// ParseProcIO reads the text of /proc/PID/io ("key: value" lines; unknown keys ignored).
func ParseProcIO(data []byte) (ProcIO, error) {
	var io ProcIO
	seen := 0
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		k, v, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
		if err != nil || n < 0 {
			return ProcIO{}, fmt.Errorf("proc io %s: %q is not a count", k, bytes.TrimSpace(v))
		}
		switch string(k) {
		case "rchar":
			io.RChar = n
		case "wchar":
			io.WChar = n
		case "read_bytes":
			io.ReadBytes = n
		case "write_bytes":
			io.WriteBytes = n
		default:
			continue
		}
		seen++
	}
	if seen == 0 {
		return ProcIO{}, fmt.Errorf("proc io: no counters")
	}
	return io, nil
}

// readProc reads a process's CPU and IO counters; ok is false when it is gone or unreadable.
func readProc(pid int) (ProcCPU, ProcIO, bool) {
	if pid <= 0 {
		return ProcCPU{}, ProcIO{}, false
	}
	st, err := proc.ReadStat(proc.Root, pid)
	if err != nil {
		return ProcCPU{}, ProcIO{}, false
	}
	var pio ProcIO
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid)); err == nil {
		pio, _ = ParseProcIO(b)
	}
	return cpuOf(st), pio, true
}
