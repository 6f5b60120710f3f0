package result

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/agbench/agbench/internal/proc"
)

// CPUCap is the CPU a process may actually use: the CPUs of its affinity mask
// (sched_getaffinity, what taskset sets) and its control group's CPU quota (cgroup v2
// cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us), not the machine's CPU count.
type CPUCap struct {
	// Affinity lists the CPUs the process may run on, as the kernel numbers them.
	Affinity []int `json:"affinity,omitempty"`
	// QuotaCores is the control group's CPU quota in cores (0: no quota); QuotaFrom names
	// the file it was read from.
	QuotaCores float64 `json:"quota_cores,omitempty"`
	QuotaFrom  string  `json:"quota_from,omitempty"`
	// MachineCPUs is the number of CPUs online on the machine.
	MachineCPUs int `json:"machine_cpus,omitempty"`
}

// Cores is the most CPU the process may use, in cores: its affinity's CPUs, or the
// quota when smaller; 0 when neither is known.
func (c CPUCap) Cores() float64 {
	n := float64(len(c.Affinity))
	if n == 0 {
		n = float64(c.MachineCPUs)
	}
	if c.QuotaCores > 0 && (n == 0 || c.QuotaCores < n) {
		return c.QuotaCores
	}
	return n
}

// Confined says whether the process may use less than the whole machine.
func (c CPUCap) Confined() bool {
	return c.MachineCPUs > 0 && c.Cores() < float64(c.MachineCPUs)
}

// String says the cap for sentences: "1 CPU (affinity cpu 0)", "0.5 cores (quota
// cpu.max)", "2 CPUs (the whole machine)".
func (c CPUCap) String() string {
	var why []string
	if len(c.Affinity) > 0 && len(c.Affinity) < c.MachineCPUs {
		why = append(why, "affinity cpu "+CPUList(c.Affinity))
	}
	if c.QuotaCores > 0 {
		why = append(why, fmt.Sprintf("control-group quota %.2g cores, %s", c.QuotaCores, c.QuotaFrom))
	}
	if len(why) == 0 {
		why = append(why, "the whole machine")
	}
	n := c.Cores()
	unit := "cores"
	switch {
	case n == 1:
		unit = "CPU"
	case n == math.Trunc(n):
		unit = "CPUs"
	}
	return fmt.Sprintf("%s %s (%s)", strconv.FormatFloat(n, 'g', 3, 64), unit, strings.Join(why, "; "))
}

// CPUList prints CPU numbers as taskset does: "0", "0-3,6".
func CPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}

// ReadCPUCap reads this process's CPU cap from the kernel: its affinity, its control
// group's quota (under /sys/fs/cgroup) and the machine's online CPUs. What cannot be read
// is left empty.
func ReadCPUCap() CPUCap {
	var c CPUCap
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) == nil {
		for i := 0; i < len(set)*64; i++ {
			if set.IsSet(i) {
				c.Affinity = append(c.Affinity, i)
			}
		}
	}
	c.MachineCPUs = machineCPUs("/sys/devices/system/cpu/online")
	if data, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		c.QuotaCores, c.QuotaFrom = CgroupQuota("/sys/fs/cgroup", data)
	}
	return c
}

// machineCPUs counts the CPUs of a list file like /sys/devices/system/cpu/online ("0-3").
func machineCPUs(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	cpus, err := ParseCPUList(strings.TrimSpace(string(data)))
	if err != nil {
		return 0
	}
	return len(cpus)
}

// ParseCPUList reads a kernel CPU list ("0-3,6").
func ParseCPUList(s string) ([]int, error) {
	var out []int
	if s == "" {
		return nil, nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("CPU list %q: %q is not a CPU number", s, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > 1<<16 {
				return nil, fmt.Errorf("CPU list %q: %q is not a range", s, part)
			}
		}
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
	}
	return out, nil
}

// CgroupQuota finds the CPU quota of the control group a process is in (its
// /proc/<pid>/cgroup, given as data) under the cgroup root: the smallest quota of the group
// and its ancestors, in cores, and the file it came from; 0 and "" when there is none.
func CgroupQuota(root string, data []byte) (float64, string) {
	best, from := 0.0, ""
	consider := func(q float64, file string) {
		if q > 0 && (best == 0 || q < best) {
			best, from = q, file
		}
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		ctrls, path := parts[1], parts[2]
		var dirs []string
		switch {
		case parts[0] == "0" && ctrls == "": // v2
			dirs = []string{root}
			if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err != nil {
				dirs = []string{filepath.Join(root, "unified")} // hybrid
			}
		case hasController(ctrls, "cpu"):
			dirs = []string{filepath.Join(root, "cpu"), filepath.Join(root, ctrls)}
		default:
			continue
		}
		for _, base := range dirs {
			for p := filepath.Clean("/" + path); ; p = filepath.Dir(p) {
				dir := filepath.Join(base, p)
				if q, ok := proc.Host.CPUMax(dir); ok {
					consider(q, filepath.Join(dir, "cpu.max"))
				}
				if q, ok := proc.Host.CFSQuota(dir); ok {
					consider(q, filepath.Join(dir, "cpu.cfs_quota_us"))
				}
				if p == "/" {
					break
				}
			}
		}
	}
	return best, from
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}
