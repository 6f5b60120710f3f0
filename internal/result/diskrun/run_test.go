package diskrun

import (
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/result"
)

// A report made again from a result holds what the run wrote into its sections; a result
// without them is an error that names the section, never an empty report.
func TestFromResult(t *testing.T) {
	rep := &Report{File: &TestFile{Path: "f.dat", Size: 1 << 20, DataStart: 4096, Created: true}, Device: "vda",
		Sweep: &Sweep{Key: "qd", Values: []int{1, 2}}, Notes: []string{"a note"},
		Steps: []*StepResult{{Workload: Workload{Threads: 1, QD: 1, BlockSizes: []int64{8192}}, Seconds: 1, Total: OpStats{IOs: 10, Latencies: []Pct{{P: 50, Us: 120}}}},
			{Workload: Workload{Threads: 1, QD: 2, BlockSizes: []int64{8192}}, Seconds: 1}}}
	res := result.New("disk", "test", nil)
	if err := res.SetExtra(result.ExtraDisk, rep.Extra()); err != nil {
		t.Fatal(err)
	}
	for i, s := range rep.Steps {
		st := result.Step{Index: i}
		if err := st.SetExtra(result.ExtraDisk, s); err != nil {
			t.Fatal(err)
		}
		res.Steps = append(res.Steps, st)
	}
	back, err := FromResult(res)
	if err != nil {
		t.Fatal(err)
	}
	if back.File.Path != "f.dat" || back.File.RegionLen() != 1<<20-4096 || back.Device != "vda" || back.Sweep.Values[1] != 2 ||
		len(back.Steps) != 2 || back.Steps[1].Workload.Outstanding() != 2 || back.Steps[0].Total.At(50) != 120 || back.RowOfLoad(2) != 1 {
		t.Errorf("made again: %+v", back)
	}
	res.Steps[1].Extra = nil
	if _, err := FromResult(res); err == nil || !strings.Contains(err.Error(), `step 1 has no "disk" section`) {
		t.Errorf("a step without its section: %v", err)
	}
	res.Extra = nil
	if _, err := FromResult(res); err == nil || !strings.Contains(err.Error(), `the run has no "disk" section`) {
		t.Errorf("a run without its section: %v", err)
	}
}
