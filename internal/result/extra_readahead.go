package result

// The readahead experiment's section of its run (Result.Extra["readahead"]), written by
// internal/workload/readahead (whose Conditions, Row, Figures and RunExtra are these types)
// and read by internal/report for the article's STATISTICS IO table.

// The readahead experiment's two tables (keys of ReadaheadConditions.Relations beside their
// indexes), written by internal/workload/readahead (whose Table1 and Table2 they are).
const (
	ReadaheadTable1 = "testtable"
	ReadaheadTable2 = "testtable2"
)

// ReadaheadRun is the run-level data of the readahead experiment: the conditions and the table.
type ReadaheadRun struct {
	Conditions ReadaheadConditions `json:"conditions"`
	Table      []ReadaheadRow      `json:"table"`
}

// ReadaheadFigures are the medians of one query's runs on one side of the comparison.
type ReadaheadFigures struct {
	Runs      int     `json:"runs"`
	ElapsedMs float64 `json:"elapsed_ms"`
	SharedHit float64 `json:"shared_hit"`
	Read      float64 `json:"shared_read"`
	IOOps     float64 `json:"io_ops"`
	AvgIOKB   float64 `json:"avg_io_kb"`
	IOReadMs  float64 `json:"io_read_ms"`
	// DeviceMs is the device's own read time (/proc/diskstats): storage time without the
	// waits inside PostgreSQL and the kernel above the device.
	DeviceMs float64 `json:"device_read_ms"`
	// Cold counts the runs that read from storage; Plan is the last run's plan nodes.
	Cold int    `json:"cold"`
	Plan string `json:"plan"`
	// NodeOK is false when some run did not use the query's plan node.
	NodeOK bool `json:"node_ok"`
}

// ReadaheadRow is one query's line of the table: prefetch off and on, and the ratio of their
// elapsed times (off / on: how many times faster prefetching made the query).
type ReadaheadRow struct {
	Query string           `json:"query"`
	Title string           `json:"title"`
	Node  string           `json:"node"`
	Off   ReadaheadFigures `json:"off"`
	On    ReadaheadFigures `json:"on"`
	Ratio float64          `json:"ratio"`
}

// ReadaheadConditions say what was possible on this machine, for the table and the result file.
type ReadaheadConditions struct {
	ServerVersion string `json:"server_version"`
	VersionNum    int    `json:"version_num"`
	// PrefetchOff and PrefetchOn say what each side of the comparison set.
	PrefetchOff string `json:"prefetch_off"`
	PrefetchOn  string `json:"prefetch_on"`
	// SequentialPrefetch says who prefetches sequential scans on this version.
	SequentialPrefetch string `json:"sequential_prefetch"`
	// ColdMethod says how each run's cache was emptied.
	ColdMethod string `json:"cold_method"`
	// DirectIO is true when the server read with O_DIRECT (debug_io_direct = data).
	DirectIO bool `json:"direct_io"`
	// Device describes the private device, or why there is none.
	Device     string `json:"device"`
	DeviceName string `json:"device_name,omitempty"`
	// Mount is where the private device was mounted (gone after Close).
	Mount string `json:"mount,omitempty"`
	// Throttle describes the IO throttle, or why there is none ("" when none was asked).
	Throttle string `json:"throttle,omitempty"`
	// IOSource says where IO operations and their size come from.
	IOSource string `json:"io_source"`
	// Relations are the experiment's tables and indexes with their sizes in bytes.
	Relations map[string]int64 `json:"relations"`
	Rows      int64            `json:"rows"`
	// Notes are further plain statements about what could not be done.
	Notes []string `json:"notes,omitempty"`
}

// ReadaheadRun returns the readahead experiment's run section: nil when the run has none,
// an *ExtraError naming the section when it does not decode.
func (r *Result) ReadaheadRun() (*ReadaheadRun, error) {
	return extraOf[ReadaheadRun](r.ExtraOf, ExtraReadahead)
}
