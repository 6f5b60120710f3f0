package harness

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// Machine describes this machine in one line: cores, memory, kernel and CPU model (from
// result.CollectHost, as every result.json does) and the load average now. Figures of a
// shared machine mean little without them.
func Machine() string {
	h := result.CollectHost()
	parts := []string{fmt.Sprintf("%d cores", h.Cores)}
	if h.MemoryBytes > 0 {
		parts = append(parts, fmt.Sprintf("%.1f GiB", float64(h.MemoryBytes)/(1<<30)))
	}
	if h.Kernel != "" {
		parts = append(parts, "kernel "+h.Kernel)
	}
	if h.CPUModel != "" {
		parts = append(parts, h.CPUModel)
	}
	parts = append(parts, "load average "+LoadAverage())
	return strings.Join(parts, ", ")
}

// LoadAverage is the machine's 1, 5 and 15-minute load averages, or "–" where
// /proc/loadavg cannot be read.
func LoadAverage() string {
	b, _ := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "–"
}

// Header prints what a benchmark compares, when, and on what machine: the first lines of
// every benchmark's output.
func Header(w io.Writer, what string) {
	fmt.Fprintf(w, "%s · %s UTC\nmachine: %s\n", what, time.Now().UTC().Format("2006-01-02 15:04"), Machine())
}

// Footer prints the load average at the end, beside the results: a machine that grew busy
// during the run changed the figures.
func Footer(w io.Writer) {
	fmt.Fprintf(w, "load average at the end: %s (%s UTC)\n", LoadAverage(), time.Now().UTC().Format("15:04"))
}
