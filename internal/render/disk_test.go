package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/result/diskrun"
)

// An analysed run leaves the warnings the analysis also gives to it, in both layouts, and
// shows Little's law only as the analysis computed it.
func TestReportLeavesSharedWarningsToTheAnalysis(t *testing.T) {
	s := &diskrun.StepResult{Workload: diskrun.Workload{Threads: 1, QD: 4, BlockSizes: []int64{8192}}, Seconds: 3}
	s.Warnings = []string{diskrun.WarnSteal + " 21.1%: a noisy neighbour shares the CPUs", diskrun.WarnBuffered + " this measures the page cache, not the device",
		"tester busy: 95% of a CPU for 1 thread(s); the load generator may be the bottleneck"}
	for _, analysed := range []bool{false, true} {
		var b bytes.Buffer
		diskDetail(&b, s, analysed)
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
	s.Little = diskrun.LittleCheck{Known: true, Outstanding: 4, Measured: 2.34, Deviation: -0.415, Applies: true}
	var b bytes.Buffer
	diskDetail(&b, s, true)
	if !strings.Contains(b.String(), "= 2.34 in flight vs 4 outstanding (ratio 0.58) MISMATCH") {
		t.Errorf("Little's law line:\n%s", b.String())
	}
}

// A step whose window the duration ended before its count of IOs says so in its heading.
func TestDiskDetailMarksACutShortStep(t *testing.T) {
	s := &diskrun.StepResult{Workload: diskrun.Workload{Threads: 1, QD: 1, BlockSizes: []int64{4096}, IOs: 1000}, Seconds: 0.05,
		Complete: true, CutShort: true, Total: diskrun.OpStats{IOs: 120}}
	var b bytes.Buffer
	diskDetail(&b, s, false)
	if !strings.Contains(b.String(), "\n0.05 s measured (CUT SHORT: 120 of 1000 IOs)\n") {
		t.Errorf("detail lacks the cut-short mark:\n%s", b.String())
	}
}
