package result

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// CollectHost describes the machine this process runs on, from /proc where there is one;
// what it cannot read it leaves empty.
func CollectHost() Host {
	h := Host{OS: runtime.GOOS, Arch: runtime.GOARCH, Cores: runtime.NumCPU(), GoVersion: runtime.Version()}
	h.LoadGenCPU = ReadCPUCap()
	if h.LoadGenCPU.MachineCPUs > 0 {
		h.Cores = h.LoadGenCPU.MachineCPUs // runtime.NumCPU counts the affinity's CPUs only
	}
	h.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = strings.TrimSpace(string(b))
	}
	h.CPUModel = procField("/proc/cpuinfo", "model name")
	if m := procField("/proc/meminfo", "MemTotal"); m != "" {
		// "23984124 kB"
		if kb, err := strconv.ParseUint(strings.Fields(m)[0], 10, 64); err == nil {
			h.MemoryBytes = kb * 1024
		}
	}
	return h
}

// procField returns the value of the first "key: value" line of a /proc file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
