package proc

import (
	"math"
	"os"
	"strconv"
	"time"

	"github.com/prometheus/procfs"
)

// SelfRunDelay is the time this process's threads have waited on a run queue, runnable but
// not running, summed over its threads (/proc/self/task/<tid>/schedstat); false where the
// kernel keeps no schedstat. A thread gone while they are read is left out.
//
// Through procfs's Proc.Schedstat, on the task folder as the mount point (a task's folder
// is laid out as a process's): it reads the three figures of the file, in nanoseconds.
func (f FS) SelfRunDelay() (time.Duration, bool) {
	dir := f.Proc("self", "task")
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, false
	}
	pfs, err := procfs.NewFS(dir)
	if err != nil {
		return 0, false
	}
	var total time.Duration
	seen := false
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		p, err := pfs.Proc(tid)
		if err != nil {
			continue
		}
		s, err := p.Schedstat()
		if err != nil || s.WaitingNanoseconds > math.MaxInt64 {
			continue
		}
		total, seen = total+time.Duration(s.WaitingNanoseconds), true
	}
	return total, seen
}
