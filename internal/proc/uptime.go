package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// Uptime reads /proc/uptime: seconds since boot, the clock of /proc/<pid>/stat's start
// times and of the CPU times of /proc/stat.
//
// By hand: procfs does not read this file.
func (f FS) Uptime() (float64, error) {
	b, err := os.ReadFile(f.Proc("uptime"))
	if err != nil {
		return 0, err
	}
	return ParseUptime(b)
}

// ParseUptime reads the text of /proc/uptime: "<seconds up> <seconds idle, summed over
// CPUs>".
func ParseUptime(data []byte) (float64, error) {
	f := bytes.Fields(data)
	if len(f) != 2 {
		return 0, fmt.Errorf("/proc/uptime %q: want two numbers", data)
	}
	up, err := strconv.ParseFloat(string(f[0]), 64)
	if err != nil || up < 0 {
		return 0, fmt.Errorf("/proc/uptime %q: %q is not seconds", data, f[0])
	}
	return up, nil
}
