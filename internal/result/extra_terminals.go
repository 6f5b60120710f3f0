package result

import (
	"fmt"
	"strings"
)

// ExtraTerminals is a tpcc step's emulated terminals (TerminalsStep), written by
// internal/workload/tpcc when the run had terminals served by its transaction monitor, and
// read by the tables, compare and the report.
const ExtraTerminals = "tpcc_terminals"

// TPC-C's terminal rules (clauses 4.2.2 and 5.2.5): ten terminals per warehouse, and the
// throughput ten terminals can ask for with the keying and think times of clause 5.2.5.7 at
// the 45% New-Order mix — 12.86 New-Orders per minute per warehouse (a response time of
// zero; any real one lowers it).
const (
	TerminalsPerWarehouse  = 10
	MaxTpmCPerWarehouse    = 12.86
	TerminalRuleClause     = "4.2.2"
	ResponseTimeRuleClause = "5.2.5.4"
)

// TerminalsStep is what a step of emulated terminals measured beside the operations'
// latencies (which, for terminals, are the specification's response times: from the
// terminal's submission to its answer, the wait in the monitor's queue included).
type TerminalsStep struct {
	// Terminals emulated, Sessions the monitor's pool of database sessions that served
	// them, Warehouses the database's.
	Terminals  int `json:"terminals"`
	Sessions   int `json:"sessions"`
	Warehouses int `json:"warehouses"`
	// SegmentWarehouses are, in a segment of a run split across load generators, the
	// warehouses its terminals were homed on (its share of Warehouses, apart from every
	// other segment's): Terminals, Sessions and TpmC are then the segment's share, and
	// TpmCPerWarehouse is per warehouse of these. Absent (0) in a whole or merged run.
	SegmentWarehouses int `json:"segment_warehouses,omitempty"`
	// ThinkScale multiplies the keying and think times of the specification: 1 is the
	// specification's; below 1 the terminals ask faster than the specification lets them
	// (a driver-capacity run), and the run is outside it.
	ThinkScale float64 `json:"think_scale"`
	// TpmC is the New-Orders completed per minute of the window (the 1% rolled back by
	// their unused item included, clause 5.4.1), and TpmCPerWarehouse its share per warehouse.
	TpmC             float64 `json:"tpmc"`
	TpmCPerWarehouse float64 `json:"tpmc_per_warehouse"`
	// QueueWait is, by transaction (TPCCOps) and for all ("*"), the time requests waited in
	// the monitor for a free session: part of the response time.
	QueueWait map[string]Hist `json:"queue_wait"`
	// Think is, by transaction, the think times drawn after it (clause 5.2.5.4: negative
	// exponential, truncated at ten times the mean), scaled by ThinkScale.
	Think map[string]Hist `json:"think"`
	// QueuedAtEnd counts the requests still waiting for a session when the window closed.
	QueuedAtEnd int `json:"queued_at_end"`
	// Driver is agbench's own memory as the step's window closed: what emulating the
	// terminals cost the load generator.
	Driver DriverMemory `json:"driver"`
}

// DriverMemory is the load generator's memory: its peak resident set since it started
// (getrusage's ru_maxrss), the Go heap in use, and all the memory the Go runtime had
// obtained from the system (a bound on the heap's peak, stacks and the runtime's own). The
// peak resident set is absent where getrusage could not be read.
type DriverMemory struct {
	PeakRSSBytes *int64 `json:"peak_rss_bytes,omitempty"`
	HeapBytes    int64  `json:"heap_bytes"`
	GoSysBytes   int64  `json:"go_sys_bytes"`
}

// HomeWarehouses are the warehouses the step's terminals were homed on: a segment's share
// (SegmentWarehouses), or all of them.
func (t TerminalsStep) HomeWarehouses() int {
	if t.SegmentWarehouses > 0 {
		return t.SegmentWarehouses
	}
	return t.Warehouses
}

// TerminalRuleHolds says whether the step had the specification's ten terminals per
// warehouse (of its home warehouses: a segment's are its share), its keying and think
// times unscaled.
func (t TerminalsStep) TerminalRuleHolds() bool {
	return t.Terminals == TerminalsPerWarehouse*t.HomeWarehouses() && t.ThinkScale == 1
}

// TpmCBound is the most New-Orders per minute per warehouse the step's terminals could ask
// for: MaxTpmCPerWarehouse, scaled by the terminals per (home) warehouse and the think scale.
func (t TerminalsStep) TpmCBound() float64 {
	if t.HomeWarehouses() <= 0 || t.ThinkScale <= 0 {
		return 0
	}
	perWH := float64(t.Terminals) / float64(t.HomeWarehouses()) / TerminalsPerWarehouse
	return MaxTpmCPerWarehouse * perWH / t.ThinkScale
}

// OutsideSpec says why a step of terminals is outside the specification's terminal rules,
// "" when it is within them; a segment's terminals are judged on its home warehouses.
func (t TerminalsStep) OutsideSpec() string {
	var why []string
	if wh := t.HomeWarehouses(); t.Terminals != TerminalsPerWarehouse*wh {
		why = append(why, fmt.Sprintf("%d terminals on %d warehouses, not the %d that clause %s asks (%d per warehouse)",
			t.Terminals, wh, TerminalsPerWarehouse*wh, TerminalRuleClause, TerminalsPerWarehouse))
	}
	if t.ThinkScale != 1 {
		why = append(why, fmt.Sprintf("keying and think times scaled by %g", t.ThinkScale))
	}
	return strings.Join(why, "; ")
}

// ResponseLimitsMicros are the 90th-percentile response-time limits of clause 5.2.5.4, by
// transaction (TPCCOps order), in microseconds. Delivery's is that of its queueing; agbench
// runs it at once, so its whole time is held to it.
var ResponseLimitsMicros = [5]int64{5e6, 5e6, 5e6, 5e6, 20e6}

// Terminals returns the step's terminals section: nil when the step had none, an
// *ExtraError naming the section when it does not decode.
func (s *Step) Terminals() (*TerminalsStep, error) {
	return extraOf[TerminalsStep](s.ExtraOf, ExtraTerminals)
}

// MergeTerminals merges the terminals sections of one step's segments, each of which
// emulated its share of the terminals over a pool of its own against the same warehouses:
// terminals, sessions and tpmC add up, the histograms merge exactly, and the driver's memory
// is the largest segment's (each segment is a process of its own). It returns nil when no
// part has the section; parts must share the warehouses and the think scale.
func MergeTerminals(parts []*TerminalsStep) (*TerminalsStep, error) {
	var out *TerminalsStep
	for _, p := range parts {
		if p == nil {
			continue
		}
		if out == nil {
			out = &TerminalsStep{Warehouses: p.Warehouses, ThinkScale: p.ThinkScale, QueueWait: map[string]Hist{}, Think: map[string]Hist{}}
		}
		if p.Warehouses != out.Warehouses || p.ThinkScale != out.ThinkScale {
			return nil, fmt.Errorf("terminals: segments of %d and %d warehouses, think scale %g and %g",
				out.Warehouses, p.Warehouses, out.ThinkScale, p.ThinkScale)
		}
		out.Terminals += p.Terminals
		out.Sessions += p.Sessions
		out.TpmC += p.TpmC
		out.QueuedAtEnd += p.QueuedAtEnd
		if err := mergeHistMap(out.QueueWait, p.QueueWait); err != nil {
			return nil, fmt.Errorf("terminals: queue wait: %w", err)
		}
		if err := mergeHistMap(out.Think, p.Think); err != nil {
			return nil, fmt.Errorf("terminals: think times: %w", err)
		}
		out.Driver = largerDriver(out.Driver, p.Driver)
	}
	if out != nil && out.Warehouses > 0 {
		out.TpmCPerWarehouse = out.TpmC / float64(out.Warehouses)
	}
	return out, nil
}

// mergeHistMap merges each histogram of m into acc, by key.
func mergeHistMap(acc, m map[string]Hist) error {
	for k, h := range m {
		merged, err := MergeHists(acc[k], h)
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		acc[k] = merged
	}
	return nil
}

// largerDriver is the larger of two load generators' memory, figure by figure; a peak
// resident set absent from one is the other's.
func largerDriver(a, b DriverMemory) DriverMemory {
	out := DriverMemory{HeapBytes: max(a.HeapBytes, b.HeapBytes), GoSysBytes: max(a.GoSysBytes, b.GoSysBytes), PeakRSSBytes: a.PeakRSSBytes}
	if b.PeakRSSBytes != nil && (a.PeakRSSBytes == nil || *b.PeakRSSBytes > *a.PeakRSSBytes) {
		out.PeakRSSBytes = b.PeakRSSBytes
	}
	return out
}
