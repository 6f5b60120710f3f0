package diskio

import (
	"strings"
	"testing"
)

// Steal is left to internal/analyze: however high, the tester adds no warning of its own,
// so the report does not print a second cause beside the analysis's.
func TestStealIsLeftToTheAnalysis(t *testing.T) {
	s := &StepResult{Complete: true, Workload: Workload{Threads: 1, QD: 1, Direct: true}, CPU: CPUView{MachineStealPct: 40}}
	checkStep(s)
	for _, w := range s.Warnings {
		if strings.Contains(w, "steal") {
			t.Errorf("tester warns about steal: %q", w)
		}
	}
}
