package live

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/diskio"
	"github.com/agbench/agbench/internal/experiment"
)

// Off a terminal, a disk run's display is plain lines: the file's creation at every tenth
// past the first, each step with its workload and times, and the run's own lines.
func TestDiskLines(t *testing.T) {
	var b bytes.Buffer
	d := NewDisk(&b, false, "t.dat")
	for done := int64(0); done <= 100; done += 5 {
		d.Fill(done, 100)
	}
	w := diskio.Workload{BlockSizes: []int64{8192}, Threads: 1, QD: 4, Random: true, Direct: true, Duration: 2 * time.Second, Warmup: time.Second}
	d.Event(experiment.DiskStep{I: 0, N: 2, Workload: w})
	d.Event(experiment.DiskStepEnded{})
	d.Event(experiment.Log{Line: "verify: reading t.dat back"})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 12 || lines[0] != "creating t.dat: 10%" || lines[9] != "creating t.dat: 100%" ||
		lines[10] != "step 1/2: 8K random read, 1 thread(s) x QD 4, direct, 2s + 1s warm-up" || lines[11] != "verify: reading t.dat back" {
		t.Errorf("lines:\n%s", b.String())
	}
}
