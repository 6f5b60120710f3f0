package seed

import "github.com/agbench/agbench/internal/proc"

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
	if io, err := proc.Host.IO(pid); err == nil {
		pio = ProcIO{RChar: int64(io.RChar), WChar: int64(io.WChar), ReadBytes: int64(io.ReadBytes), WriteBytes: int64(io.WriteBytes)}
	}
	return cpuOf(st), pio, true
}
