package diskrun

import (
	"fmt"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// TestFile is the file a step reads and writes.
type TestFile struct {
	Path string `json:"path"`
	// Size is the whole file; IO goes to [DataStart, Size).
	Size      int64 `json:"size"`
	DataStart int64 `json:"data_start"`
	// Created is true when this run made the file (and so removes it unless kept).
	Created bool `json:"created"`
	// Foreign is true for a file agbench did not create, used only with --force.
	Foreign bool `json:"foreign,omitempty"`
}

// RegionLen is the number of bytes IO may touch.
func (t *TestFile) RegionLen() int64 { return t.Size - t.DataStart }

// VerifyReport is what a checksum pass found.
type VerifyReport struct {
	Unit int64 `json:"unit"`
	// Checked is how many units were read back.
	Checked int64 `json:"checked"`
	// Bad holds the file offsets of the units that differ (at most MaxBadReported).
	Bad      []int64 `json:"bad,omitempty"`
	BadCount int64   `json:"bad_count"`
}

// MaxBadReported caps the offsets kept in a VerifyReport.
const MaxBadReported = 1000

// Marks are the places on the load curve the storage article asks for, as row indices
// of the run's steps (-1 when there is none). internal/analyze finds them; this is how
// the disk tables show them.
type Marks struct {
	// Characteristic is the row of lowest load: the device's characteristic latency.
	Characteristic int `json:"characteristic"`
	// Efficient is the row of highest power (IOPS / mean latency).
	Efficient int `json:"efficient"`
	// Knee is where more outstanding IOs stop paying (Kneedle), -1 when not reached.
	Knee int `json:"knee"`
	// Saturation is the first row near the best throughput.
	Saturation int `json:"saturation"`
	// RisingAtEnd says throughput still rose at the highest load: sweep further.
	RisingAtEnd bool   `json:"rising_at_end,omitempty"`
	Method      string `json:"method"`
}

// RunExtra is the run-level part of a disk run that the common schema has no field for;
// it is stored under Result.Extra["disk"]. The part read by packages that know nothing of
// the tester (the device) is result.DiskRun, embedded.
type RunExtra struct {
	File           *TestFile       `json:"file"`
	result.DiskRun                 // device
	Sweep          *Sweep          `json:"sweep,omitempty"`
	Marks          *Marks          `json:"marks,omitempty"`
	Verify         *VerifyReport   `json:"verify,omitempty"`
	DiskSpd        *DiskSpdCommand `json:"diskspd,omitempty"`
	Notes          []string        `json:"notes,omitempty"`
}

// Report is one `agbench disk` run as the text tables show it: internal/diskio fills it
// as the run goes and writes it into the common result schema; a result's sections make
// it again (FromResult).
type Report struct {
	Start   time.Time
	File    *TestFile
	Device  string
	Sweep   *Sweep
	Steps   []*StepResult
	Marks   *Marks
	Verify  *VerifyReport
	Notes   []string
	DiskSpd *DiskSpdCommand
	// Analysed is set when internal/analyze judged the run (its verdicts are printed after
	// the report): warnings it also gives (SharedWarning) are then left to it.
	Analysed bool
}

// RowOfLoad returns the index of the step with the given outstanding IOs, or -1.
func (r *Report) RowOfLoad(load float64) int {
	for i, s := range r.Steps {
		if float64(s.Workload.Outstanding()) == load {
			return i
		}
	}
	return -1
}

// Extra is the report's run-level section.
func (r *Report) Extra() RunExtra {
	return RunExtra{File: r.File, DiskRun: result.DiskRun{Device: r.Device}, Sweep: r.Sweep,
		Marks: r.Marks, Verify: r.Verify, DiskSpd: r.DiskSpd, Notes: r.Notes}
}

// FromResult makes the report of a disk run again from its result: the run's section and
// each step's. The analysis's findings (Little's law, the marks' rows) are not in them:
// internal/experiment's DiskAnalysed gives them, as it does after a run.
func FromResult(res *result.Result) (*Report, error) {
	var ex RunExtra
	if ok, err := res.ExtraOf(result.ExtraDisk, &ex); !ok || err != nil {
		return nil, sectionError(err, "the run")
	}
	rep := &Report{Start: res.Meta.Started, File: ex.File, Device: ex.Device, Sweep: ex.Sweep,
		Verify: ex.Verify, Notes: ex.Notes, DiskSpd: ex.DiskSpd, Marks: ex.Marks}
	for i := range res.Steps {
		s := &StepResult{}
		if ok, err := res.Steps[i].ExtraOf(result.ExtraDisk, s); !ok || err != nil {
			return nil, sectionError(err, fmt.Sprintf("step %d", i))
		}
		rep.Steps = append(rep.Steps, s)
	}
	return rep, nil
}

// sectionError is the error of a disk section that did not decode, or is absent.
func sectionError(err error, of string) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("%s has no %q section: not a disk run", of, result.ExtraDisk)
}
