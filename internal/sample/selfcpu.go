package sample

import (
	"syscall"
	"time"
)

// SelfCPU returns the CPU time (user plus system) this process has used since it started,
// from getrusage(RUSAGE_SELF): the load generator's own cost.
func SelfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
