package diskio

import (
	"bytes"
	"strings"
	"testing"
)

// An analysed run leaves the warnings the analysis also gives to it, in both layouts, and
// shows Little's law only as the analysis computed it.
func TestReportLeavesSharedWarningsToTheAnalysis(t *testing.T) {
	s := &StepResult{Workload: Workload{Threads: 1, QD: 4, BlockSizes: []int64{8192}}, Seconds: 3}
	s.Warnings = []string{warnSteal + " 21.1%: a noisy neighbour shares the CPUs", warnBuffered + " this measures the page cache, not the device",
		"tester busy: 95% of a CPU for 1 thread(s); the load generator may be the bottleneck"}
	for _, analysed := range []bool{false, true} {
		var b bytes.Buffer
		s.writeDetail(&b, analysed)
		out := b.String()
		if strings.Contains(out, "Little's law") {
			t.Errorf("Little's law shown before the analysis computed it:\n%s", out)
		}
		if got := strings.Contains(out, "steal time") || strings.Contains(out, "buffered IO"); got == analysed {
			t.Errorf("analysed %v: shared warnings shown %v:\n%s", analysed, got, out)
		}
		if !strings.Contains(out, "tester busy") {
			t.Errorf("analysed %v: the tester's own warning is gone:\n%s", analysed, out)
		}
	}
	s.Little = LittleCheck{Known: true, Outstanding: 4, Measured: 2.34, Deviation: -0.415, Applies: true}
	var b bytes.Buffer
	s.writeDetail(&b, true)
	if !strings.Contains(b.String(), "= 2.34 in flight vs 4 outstanding (ratio 0.58) MISMATCH") {
		t.Errorf("Little's law line:\n%s", b.String())
	}
}

// Steal is left to internal/analyze: however high, the tester adds no warning of its own,
// so the report does not print a second cause beside the analysis's.
func TestStealIsLeftToTheAnalysis(t *testing.T) {
	s := &StepResult{Complete: true, Workload: Workload{Threads: 1, QD: 1, Direct: true}, CPU: CPUView{MachineStealPct: 40}}
	s.check()
	for _, w := range s.Warnings {
		if strings.Contains(w, "steal") {
			t.Errorf("tester warns about steal: %q", w)
		}
	}
}
