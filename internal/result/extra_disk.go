package result

// The storage tester's section of a run (Result.Extra["disk"]), written by internal/diskio.
// Its whole shape is diskio.RunExtra, which embeds DiskRun: DiskRun is the part that
// packages unable to import diskio (analyze, report) read.

// DiskRun is the part of a storage test's run section read outside internal/diskio.
type DiskRun struct {
	// Device is the block device behind the test file, when known.
	Device string `json:"device,omitempty"`
}

// DiskRun returns the storage tester's run section: nil when the run has none, an
// *ExtraError naming the section when it does not decode.
func (r *Result) DiskRun() (*DiskRun, error) {
	return extraOf[DiskRun](r.ExtraOf, ExtraDisk)
}
