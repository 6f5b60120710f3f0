package experiment

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/diskio"
	"github.com/agbench/agbench/internal/render"
)

// A disk step the analysis could not judge for Little's law (0 IOPS) shows "-" in the
// table, not "0.00 in flight (ratio 0.00)".
func TestDiskLittleNotJudgedIsAbsent(t *testing.T) {
	rep := &diskio.Report{File: &diskio.TestFile{Path: "f", Size: 1 << 20}, Steps: []*diskio.StepResult{{Workload: diskio.Workload{Threads: 1, QD: 4, BlockSizes: []int64{8192}}, Seconds: 3}}}
	run := &analyze.Run{Variants: []analyze.VariantAnalysis{{Result: analyze.Analysis{Little: analyze.CheckLittle([]analyze.Step{{Load: 4, Throughput: 0, MeanMs: 1}})}}}}
	DiskAnalysed(rep, run)
	if rep.Steps[0].Little.Known {
		t.Fatalf("not judged step marked known: %+v", rep.Steps[0].Little)
	}
	var b bytes.Buffer
	render.Disk(&b, rep)
	if out := b.String(); strings.Contains(out, "ratio 0.00") || strings.Contains(out, "0.00 in flight") || !strings.Contains(out, "not judged") {
		t.Errorf("unjudged Little's law shown as a number:\n%s", out)
	}
}
