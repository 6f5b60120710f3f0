package readahead

import (
	"slices"

	"github.com/agbench/agbench/internal/agerr"
)

// Name is the workload's name in the registry and its command's.
const Name = "readahead"

// Defaults of the experiment: the article's bounds, and a table big enough that a cold
// scan takes seconds on a disk.
const (
	DefaultRows          = 5_000_000
	DefaultRangeIDs      = 300_000 // the article's "WHERE ID < 300000"
	DefaultJoinIDs       = 1_000   // the article's "AND ID < 1000"
	DefaultRepeat        = 3
	DefaultReadAheadKB   = 128 // Linux's default read_ahead_kb
	DefaultIOConcurrency = 256 // "high" effective_io_concurrency for the prefetch-on runs
	// MinRows keeps the join and range bounds meaningful.
	MinRows = 1000
)

// Device choices for the tablespace.
const (
	DeviceAuto = "auto" // a private loop device when root and possible, else none
	DeviceNone = "none" // the server's own data directory
)

// Config are the experiment's choices; zero values take the defaults (see Defaults).
type Config struct {
	Rows     int64
	RangeIDs int64
	JoinIDs  int64
	Repeat   int
	// Queries to run, by name (QueryNames); empty means all.
	Queries []string
	// Device is DeviceAuto or DeviceNone; DeviceParent is where the loop device's folder is
	// made ("" is the system's temporary folder).
	Device       string
	DeviceParent string
	// ReadAheadKB is the device's read-ahead for prefetch-on runs (prefetch off sets 0).
	ReadAheadKB int
	// IOConcurrency is effective_io_concurrency for prefetch-on runs (off sets 0).
	IOConcurrency int
	// ThrottleIOPS limits the private device's reads per second (0: no limit).
	ThrottleIOPS int
	// DropCaches also drops the whole OS page cache before each cold run.
	DropCaches bool
	// Seed seeds the table's random column.
	Seed int64
	// Progress, when set, is given one line per step of set-up and per measurement, from
	// the goroutine that runs the experiment.
	Progress func(line string)
}

// WithDefaults returns c with zero values replaced by the defaults.
func (c Config) WithDefaults() Config {
	if c.Rows == 0 {
		c.Rows = DefaultRows
	}
	if c.RangeIDs == 0 {
		c.RangeIDs = min(DefaultRangeIDs, c.Rows)
	}
	if c.JoinIDs == 0 {
		c.JoinIDs = min(DefaultJoinIDs, c.Rows)
	}
	if c.Repeat == 0 {
		c.Repeat = DefaultRepeat
	}
	if len(c.Queries) == 0 {
		c.Queries = QueryNames
	}
	if c.Device == "" {
		c.Device = DeviceAuto
	}
	if c.ReadAheadKB == 0 {
		c.ReadAheadKB = DefaultReadAheadKB
	}
	if c.IOConcurrency == 0 {
		c.IOConcurrency = DefaultIOConcurrency
	}
	return c
}

// Validate reports every bad choice at once, naming the flag.
func (c Config) Validate() error {
	var errs []error
	if c.Rows < MinRows {
		errs = append(errs, agerr.BadInputf("--rows %d: want at least %d", c.Rows, MinRows))
	}
	if c.RangeIDs < 1 || c.RangeIDs > c.Rows {
		errs = append(errs, agerr.BadInputf("--range-ids %d: want 1 to --rows (%d)", c.RangeIDs, c.Rows))
	}
	if c.JoinIDs < 1 || c.JoinIDs > c.Rows {
		errs = append(errs, agerr.BadInputf("--join-ids %d: want 1 to --rows (%d)", c.JoinIDs, c.Rows))
	}
	if c.Repeat < 1 || c.Repeat > 100 {
		errs = append(errs, agerr.BadInputf("--repeat %d: want 1 to 100", c.Repeat))
	}
	for _, q := range c.Queries {
		if !slices.Contains(QueryNames, q) {
			errs = append(errs, agerr.BadInputf("--queries %q: want some of %v", q, QueryNames))
		}
	}
	if c.Device != DeviceAuto && c.Device != DeviceNone {
		errs = append(errs, agerr.BadInputf("--device %q: want auto or none", c.Device))
	}
	if c.ReadAheadKB < 1 || c.ReadAheadKB > 1<<16 {
		errs = append(errs, agerr.BadInputf("--read-ahead-kb %d: want 1 to 65536", c.ReadAheadKB))
	}
	if c.IOConcurrency < 1 || c.IOConcurrency > 1000 {
		errs = append(errs, agerr.BadInputf("--io-concurrency %d: want 1 to 1000 (effective_io_concurrency)", c.IOConcurrency))
	}
	if c.ThrottleIOPS < 0 {
		errs = append(errs, agerr.BadInputf("--throttle-iops %d: want 0 (none) or more", c.ThrottleIOPS))
	}
	if c.ThrottleIOPS > 0 && c.Device == DeviceNone {
		errs = append(errs, agerr.BadInputf("--throttle-iops needs the private device (--device auto)"))
	}
	return agerr.Join(errs...)
}

// selected returns the configured queries in run order.
func (c Config) selected() []Query {
	var out []Query
	for _, q := range Queries(c.RangeIDs, c.JoinIDs) {
		if slices.Contains(c.Queries, q.Name) {
			out = append(out, q)
		}
	}
	return out
}
