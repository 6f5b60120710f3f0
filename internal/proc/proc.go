package proc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Root is where the kernel's process files are; tests pass a copy of their own.
const Root = "/proc"

// UserHZ is USER_HZ, the unit of the CPU times in /proc/<pid>/stat: 100 on every Linux
// architecture agbench runs on (the kernel fixes it for user space).
const UserHZ = 100

// Stat is what agbench keeps of a /proc/<pid>/stat line (proc(5)).
type Stat struct {
	PID int
	// Comm is the command name (field 2), without its parentheses.
	Comm string
	// State is field 3: R running, S sleeping, D disk sleep, T stopped, t tracing stop, Z zombie, X dead, …
	State byte
	PPID  int
	// UTime and STime are the process's own user and system time, in clock ticks (UserHZ).
	UTime, STime uint64
	// CUTime and CSTime are those of its children it waited for (signed in the kernel).
	CUTime, CSTime int64
	// StartTime is when it started, in clock ticks since boot: with the pid, it names one
	// process (a pid is reused, a pid and a start time are not).
	StartTime uint64
}

// statFields is how many fields ParseStat needs after the command name: state (field 3) up
// to starttime (field 22).
const statFields = 20

// ParseStat reads a /proc/<pid>/stat line: "pid (comm) state ppid pgrp session tty tpgid
// flags minflt cminflt majflt cmajflt utime stime cutime cstime priority nice threads
// itrealvalue starttime ...". The command name may hold spaces and parentheses (any 15
// bytes a process gives itself), so it ends at the line's last ')'.
func ParseStat(data []byte) (Stat, error) {
	var s Stat
	open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return s, fmt.Errorf("/proc stat: no (command name)")
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(data[:open])))
	if err != nil || pid < 0 {
		return s, fmt.Errorf("/proc stat: pid %q is not a process id", bytes.TrimSpace(data[:open]))
	}
	s.PID, s.Comm = pid, string(data[open+1:end])
	f := bytes.Fields(data[end+1:])
	if len(f) < statFields {
		return s, fmt.Errorf("/proc stat: %d fields after the command name, want at least %d", len(f), statFields)
	}
	if len(f[0]) != 1 || !('A' <= f[0][0] && f[0][0] <= 'Z' || 'a' <= f[0][0] && f[0][0] <= 'z') {
		return s, fmt.Errorf("/proc stat: state %q is not one letter", f[0])
	}
	s.State = f[0][0]
	// The parent of pid 0's children (init, kthreadd) is 0.
	if s.PPID, err = strconv.Atoi(string(f[1])); err != nil || s.PPID < 0 {
		return s, fmt.Errorf("/proc stat: parent %q is not a process id", f[1])
	}
	for i, u := range []*uint64{&s.UTime, &s.STime} {
		if *u, err = strconv.ParseUint(string(f[11+i]), 10, 64); err != nil {
			return s, fmt.Errorf("/proc stat field %d: %q is not a count of clock ticks", 14+i, f[11+i])
		}
	}
	for i, v := range []*int64{&s.CUTime, &s.CSTime} {
		if *v, err = strconv.ParseInt(string(f[13+i]), 10, 64); err != nil {
			return s, fmt.Errorf("/proc stat field %d: %q is not a count of clock ticks", 16+i, f[13+i])
		}
	}
	if s.StartTime, err = strconv.ParseUint(string(f[19]), 10, 64); err != nil {
		return s, fmt.Errorf("/proc stat field 22: start time %q is not a count of clock ticks", f[19])
	}
	return s, nil
}

// OwnTicks is the process's own CPU time, user plus system, in clock ticks.
func (s Stat) OwnTicks() uint64 { return s.UTime + s.STime }

// ReapedTicks is the CPU time of the children it waited for, user plus system, in clock
// ticks (a negative figure counts as none).
func (s Stat) ReapedTicks() uint64 { return uint64(max(s.CUTime, 0)) + uint64(max(s.CSTime, 0)) }

// Ticks is OwnTicks plus ReapedTicks: all the CPU time of the process and of its children
// that are gone.
func (s Stat) Ticks() uint64 { return s.OwnTicks() + s.ReapedTicks() }

// Zombie says whether the process has exited and waits for its parent to reap it (or is
// dead): gone for every purpose but its pid.
func (s Stat) Zombie() bool { return s.State == 'Z' || s.State == 'X' || s.State == 'x' }

// Seconds turns clock ticks into seconds.
func Seconds(ticks uint64) float64 { return float64(ticks) / UserHZ }

// ReadStat reads the stat line of the process pid under root (Root outside tests).
func ReadStat(root string, pid int) (Stat, error) {
	data, err := os.ReadFile(filepath.Join(root, strconv.Itoa(pid), "stat"))
	if err != nil {
		return Stat{}, err
	}
	return ParseStat(data)
}

// Children returns the stat lines of the processes whose parent is pid, read from every
// process under root; a process gone while they are read is left out.
func Children(root string, pid int) ([]Stat, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []Stat
	for _, e := range entries {
		k, err := strconv.Atoi(e.Name())
		if err != nil || k == pid {
			continue
		}
		if s, err := ReadStat(root, k); err == nil && s.PPID == pid {
			out = append(out, s)
		}
	}
	return out, nil
}

// ParseCmdline splits the text of /proc/<pid>/cmdline (each word ended by a NUL byte) into
// its words: one empty word when it is empty.
func ParseCmdline(raw []byte) []string {
	return strings.Split(string(bytes.TrimRight(raw, "\x00")), "\x00")
}

// Cmdline reads the command line of the process pid under root (Root outside tests).
func Cmdline(root string, pid int) ([]string, error) {
	raw, err := os.ReadFile(filepath.Join(root, strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return nil, err
	}
	return ParseCmdline(raw), nil
}
