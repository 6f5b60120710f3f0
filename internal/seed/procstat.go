package seed

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// clockTicks is USER_HZ, the unit of /proc/PID/stat's CPU times: 100 on every Linux
// architecture agbench runs on (the kernel fixes it for user space).
const clockTicks = 100

// ProcCPU is a process's CPU time so far (its reaped children included).
type ProcCPU struct {
	UserSeconds, SystemSeconds float64
}

// Seconds is user plus system time.
func (c ProcCPU) Seconds() float64 { return c.UserSeconds + c.SystemSeconds }

// ParseProcStat reads utime, stime, cutime and cstime from the text of /proc/PID/stat.
// The command name (field 2) is in parentheses and may hold spaces and parentheses, so
// fields are counted after its last ')'.
func ParseProcStat(data []byte) (ProcCPU, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return ProcCPU{}, fmt.Errorf("proc stat: no command name")
	}
	f := bytes.Fields(data[i+1:])
	// After the name: state(3) ppid ... utime is field 14, i.e. f[11]; stime f[12]; cutime f[13]; cstime f[14].
	if len(f) < 15 {
		return ProcCPU{}, fmt.Errorf("proc stat: %d fields after the name, want at least 15", len(f))
	}
	var v [4]float64
	for j := range v {
		n, err := strconv.ParseUint(string(f[11+j]), 10, 64)
		if err != nil {
			return ProcCPU{}, fmt.Errorf("proc stat field %d: %q is not a count", 14+j, f[11+j])
		}
		v[j] = float64(n) / clockTicks
	}
	return ProcCPU{UserSeconds: v[0] + v[2], SystemSeconds: v[1] + v[3]}, nil
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
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ProcCPU{}, ProcIO{}, false
	}
	cpu, err := ParseProcStat(b)
	if err != nil {
		return ProcCPU{}, ProcIO{}, false
	}
	var pio ProcIO
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid)); err == nil {
		pio, _ = ParseProcIO(b)
	}
	return cpu, pio, true
}
