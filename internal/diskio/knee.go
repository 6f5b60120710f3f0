package diskio

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

// RowOfLoad returns the index of the step with the given outstanding IOs, or -1.
func (r *Report) RowOfLoad(load float64) int {
	for i, s := range r.Steps {
		if float64(s.Workload.Outstanding()) == load {
			return i
		}
	}
	return -1
}
