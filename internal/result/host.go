package result

import (
	"os"
	"runtime"

	"github.com/agbench/agbench/internal/proc"
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
	h.Kernel, _ = proc.Host.OSRelease()
	h.CPUModel, _ = proc.Host.CPUModel()
	if m, err := proc.Host.Meminfo(); err == nil {
		h.MemoryBytes = uint64(m.TotalBytes)
	}
	return h
}
