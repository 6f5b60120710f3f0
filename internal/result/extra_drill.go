package result

import (
	"time"

	"github.com/agbench/agbench/internal/status"
)

// A failover drill's sections, written by internal/drill: the run's (Extra["drill"]: DrillRun)
// and each cycle's step (Step.Extra["drill"]: DrillCycle).

// DrillRun is a drill's run: what was asked and the sum over its cycles.
type DrillRun struct {
	Fault string `json:"fault"`
	// Workload is the load of the cycles: "ledger" (also when absent) or "tpcc", whose
	// acknowledged commits counted (Acked, Lost, InDoubt) are New-Orders.
	Workload string `json:"workload,omitempty"`
	Commit   string `json:"commit"`
	Cycles   int    `json:"cycles"`
	// CyclesDone counts cycles whose checks ran.
	CyclesDone int `json:"cycles_done"`
	// Acked and Lost sum the acknowledged commits and the lost ones over the cycles checked;
	// InDoubt the commits sent without an acknowledgment, InDoubtPresent those of them
	// found. All four are absent when no cycle was checked (Totals); a result from before
	// they could be absent says 0 then, with CyclesDone 0.
	Acked          *int64 `json:"acked,omitempty"`
	Lost           *int64 `json:"lost,omitempty"`
	InDoubt        *int64 `json:"in_doubt,omitempty"`
	InDoubtPresent *int64 `json:"in_doubt_present,omitempty"`
	// WriteBack and ReadBack are the cycles' times from the fault to the first acknowledged
	// write and to the first successful read, in seconds; absent when no cycle had one.
	WriteBackP50 *float64 `json:"write_back_p50_seconds,omitempty"`
	WriteBackMax *float64 `json:"write_back_max_seconds,omitempty"`
	ReadBackP50  *float64 `json:"read_back_p50_seconds,omitempty"`
	ReadBackMax  *float64 `json:"read_back_max_seconds,omitempty"`
	// WritesBlocked are the cycles' longest times from the fault without an acknowledged
	// write, in seconds; absent when no cycle measured one.
	WritesBlockedP50 *float64 `json:"writes_blocked_p50_seconds,omitempty"`
	WritesBlockedMax *float64 `json:"writes_blocked_max_seconds,omitempty"`
	// SyncWaitCycles counts the checked cycles whose new primary had no synchronous standby
	// until the old primary rejoined (DrillCycle.SyncWait): their writes came back only then.
	SyncWaitCycles int `json:"sync_wait_cycles,omitempty"`
	// NoSyncCycles counts the checked cycles whose new primary acknowledged commits with no
	// synchronous standby (DrillSyncGap.NoSyncSeconds > 0), NoSyncMax the longest such time;
	// absent when no cycle measured it.
	NoSyncCycles int      `json:"no_sync_cycles,omitempty"`
	NoSyncMax    *float64 `json:"no_sync_max_seconds,omitempty"`
	// NoSyncOpenCycles counts those still without one at the load's end (their time is a
	// lower bound), NoSyncMaxOpen says NoSyncMax is such a lower bound, and
	// NoSyncMeasuredCycles counts the checked cycles whose time was measured (0 included):
	// the others' are absent, and no part of the count.
	NoSyncOpenCycles     int  `json:"no_sync_open_cycles,omitempty"`
	NoSyncMaxOpen        bool `json:"no_sync_max_open,omitempty"`
	NoSyncMeasuredCycles int  `json:"no_sync_measured_cycles,omitempty"`
	// DetectP50 and DetectMax are the cycles' times from the fault until it was detected
	// (freeze-primary, partition-primary); absent when no cycle had one.
	DetectP50 *float64 `json:"detect_p50_seconds,omitempty"`
	DetectMax *float64 `json:"detect_max_seconds,omitempty"`
	// Verdict is the drill's one line; Failed says why a check failed (a lost commit, two
	// writable nodes, an old primary not back), empty when every check passed.
	Verdict string   `json:"verdict"`
	Failed  []string `json:"failed,omitempty"`
	// Left is the cluster's state at the end: whole, or what is left and how to repair it.
	Left string `json:"left"`
	// RestartedInPlace counts the checked cycles whose primary was restarted in place (its
	// PostgreSQL started again on the same node, no failover: To is From).
	RestartedInPlace int `json:"restarted_in_place,omitempty"`
	// ChecksFailed counts, with tpcc, the checked cycles whose consistency conditions did
	// not all hold (or could not be checked).
	ChecksFailed int `json:"checks_failed,omitempty"`
	// Patroni is set when Patroni, not agbench, failed the cluster over.
	Patroni *DrillPatroni `json:"patroni,omitempty"`
}

// DrillTotals are a drill's sums over its checked cycles.
type DrillTotals struct {
	Acked, Lost, InDoubt, InDoubtPresent int64
}

// Totals returns the sums over the checked cycles; false when no cycle was checked (the
// sums are then absent, also in a result from before they could be, which says 0).
func (r *DrillRun) Totals() (DrillTotals, bool) {
	if r.CyclesDone == 0 || r.Acked == nil {
		return DrillTotals{}, false
	}
	return DrillTotals{Acked: *r.Acked, Lost: deref(r.Lost), InDoubt: deref(r.InDoubt), InDoubtPresent: deref(r.InDoubtPresent)}, true
}

// LostChecked returns the cycle's lost commits and the in-doubt ones found; false when the
// cycle was not checked (a result from before they could be absent says 0 then).
func (c *DrillCycle) LostChecked() (lost, present int64, ok bool) {
	if !c.Checked {
		return 0, 0, false
	}
	return deref(c.Lost), deref(c.InDoubtPresent), true
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// DrillCycle is one cycle of a drill: the fault, the failover and the checks.
type DrillCycle struct {
	Cycle   int       `json:"cycle"`
	Fault   string    `json:"fault"`
	From    string    `json:"from"`
	To      string    `json:"to,omitempty"`
	FaultAt time.Time `json:"fault_at"`
	// FaultStart says, for a failover by other means (observe), which moment FaultAt is:
	// when the writes first degraded before the primary stopped answering, or when it
	// stopped answering; empty when the drill made the fault itself.
	FaultStart string `json:"fault_start,omitempty"`
	// FaultWithinS is how much later than FaultAt a fault timed from degraded writes may
	// have begun, in seconds: one interval, more when the steady load itself dipped as low
	// for several intervals in a row. Absent when FaultAt is not timed from the writes.
	FaultWithinS *float64 `json:"fault_within_s,omitempty"`
	// FailoverSeconds is the failover's own time until the new primary accepted writes, as
	// internal/cluster measured it, from the detection when the failover itself detected the
	// fault (freeze-primary's probe); absent when no failover ran.
	FailoverSeconds *float64 `json:"failover_seconds,omitempty"`
	// DetectSeconds is from the fault until it was noticed, by a timeout (freeze-primary:
	// the primary did not answer; partition-primary: no standby received anything from it);
	// FenceSeconds until the old primary's processes were killed, before the promotion.
	// Absent for faults that need neither.
	DetectSeconds *float64 `json:"detect_seconds,omitempty"`
	FenceSeconds  *float64 `json:"fence_seconds,omitempty"`
	// OldAcked counts the writes the old primary acknowledged after the fault (the isolated
	// primary of partition-primary, with async commit); OldAckedAfterPromotion those it
	// acknowledged after the new primary accepted writes: more than zero is a split brain.
	OldAcked               int64 `json:"old_acked"`
	OldAckedAfterPromotion int64 `json:"old_acked_after_promotion"`
	// WriteBackSeconds is from the fault to the first write that began after it and that the
	// new primary acknowledged; ReadBackSeconds to the first successful read that began
	// after it (on any node). Absent when there was none in the cycle.
	WriteBackSeconds *float64 `json:"write_back_seconds,omitempty"`
	ReadBackSeconds  *float64 `json:"read_back_seconds,omitempty"`
	// Acked is the commits the server acknowledged in the cycle (counted by the load, checked
	// or not); Lost those missing from the new primary (LostIDs lists up to MaxLostIDs of
	// them), absent when the cycle was not checked.
	Acked   int64   `json:"acked"`
	Lost    *int64  `json:"lost,omitempty"`
	LostIDs []int64 `json:"lost_ids,omitempty"`
	// InDoubt are commits sent whose acknowledgment never came (counted by the load);
	// InDoubtPresent the ones found on the new primary, absent when the cycle was not
	// checked. Neither is a loss.
	InDoubt        int64  `json:"in_doubt"`
	InDoubtPresent *int64 `json:"in_doubt_present,omitempty"`
	// WALBytesLacked is the WAL the new primary lacked of the old one; absent with
	// WALBytesNote saying why.
	WALBytesLacked *int64 `json:"wal_bytes_lacked,omitempty"`
	WALBytesNote   string `json:"wal_bytes_note,omitempty"`
	// Writable names the nodes that accepted writes after the failover (exactly one is right).
	Writable []string `json:"writable"`
	// Streaming names the standbys the new primary streams to; OldPrimary is the old
	// primary's state after the cycle ("streaming", or what went wrong).
	Streaming  []string `json:"streaming"`
	OldPrimary string   `json:"old_primary"`
	// Errors are every error of the cycle's load, in the order they happened.
	Errors []DrillError `json:"errors,omitempty"`
	// Checked is true when the checks ran; Problems are the checks that failed and the
	// steps that did not go as planned.
	Checked  bool     `json:"checked"`
	Problems []string `json:"problems,omitempty"`

	// Target is the node the fault hit when it is not the primary at the cycle's start (the
	// standby a kill-standby killed); Healed says how the fault was undone ("streaming" for a
	// standby back and streaming, or what went wrong), for faults with no failover.
	Target string `json:"target,omitempty"`
	Healed string `json:"healed,omitempty"`
	// NotStreaming names the standbys that did not stream from the primary after the cycle.
	NotStreaming []string `json:"not_streaming,omitempty"`
	// WritesBlockedSeconds is the longest time from the fault on without an acknowledged
	// write (commits waiting for a synchronous standby, a server refusing writes); absent
	// when no write was acknowledged after the fault.
	WritesBlockedSeconds *float64 `json:"writes_blocked_seconds,omitempty"`
	// SyncWait says, when the new primary's commits waited for the old primary to rejoin
	// because it was the only synchronous standby the new primary could have (sync commit,
	// no other standby), when it rejoined: writes were back only then, by the cluster's
	// design, not by a slow failover.
	SyncWait string `json:"sync_wait,omitempty"`
	// SyncGap is, after a failover, what the new primary itself said of its synchronous
	// standbys while it accepted writes (sampled every 200 ms): how long it acknowledged
	// commits with no synchronous standby, or made them wait for one. Absent without a
	// failover.
	SyncGap *DrillSyncGap `json:"sync_gap,omitempty"`
	// FaultMissed says why the fault did not take effect (a WAL file system filled, and the
	// server went on writing): the cycle then measures no outage, its times are absent,
	// and the run fails.
	FaultMissed string `json:"fault_missed,omitempty"`
	// RerouteWriteSeconds and RerouteReadSeconds are, through a listener, the times from the
	// fault until it first routed a new write session to the new primary and a new
	// read-intent session to a standby; absent with RerouteNote saying why.
	RerouteWriteSeconds *float64 `json:"reroute_write_seconds,omitempty"`
	RerouteReadSeconds  *float64 `json:"reroute_read_seconds,omitempty"`
	RerouteNote         string   `json:"reroute_note,omitempty"`
	// Events are the cycle's moments (the fault, its detection, the promotion, writes and
	// reads back, the listener's reroute), in the order they happened.
	Events []DrillEvent `json:"events,omitempty"`
	// Timeline is the load's operations per interval over the cycle, for the report.
	Timeline *DrillTimeline `json:"timeline,omitempty"`

	// Under Patroni: what Patroni did ("promoted standby1", "restarted primary's PostgreSQL
	// in place: no failover"), PostgreSQL's timeline the primary writes on after it (PGTimeline), as Patroni's
	// REST API reported it (0: not reported), and the nodes seen accepting writes at once
	// before the old primary was healed (more than one is a split brain).
	HAOutcome  string   `json:"ha_outcome,omitempty"`
	PGTimeline int      `json:"pg_timeline,omitempty"`
	SplitBrain []string `json:"split_brain,omitempty"`

	// TPCC is set with the tpcc workload: the cycle's Acked, Lost and InDoubt are then
	// New-Orders.
	TPCC *DrillTPCC `json:"tpcc,omitempty"`
}

// DrillTPCC is a tpcc drill cycle's own figures: the read-write transactions acknowledged,
// the lost New-Orders named ("w/d/o"), and TPC-C's consistency conditions (clause 3.3.2) as
// run on the primary after the cycle; ChecksError says why they did not run (Checks empty).
type DrillTPCC struct {
	Transactions int64            `json:"transactions"`
	LostOrders   []string         `json:"lost_orders,omitempty"`
	Checks       []DrillCondition `json:"checks,omitempty"`
	ChecksError  string           `json:"checks_error,omitempty"`
}

// DrillCondition is one consistency condition and the rows that broke it (0: it holds).
type DrillCondition struct {
	Clause     string `json:"clause"`
	Name       string `json:"name"`
	Violations int64  `json:"violations"`
}

// DrillFaultPlanned is the drill's planned failover (DrillCycle.Fault: the primary shut
// down cleanly, a standby that replayed all its WAL promoted), named here for the tables
// that read it without importing internal/drill.
const DrillFaultPlanned = "planned"

// Names of a drill cycle's events.
const (
	EventFault        = "fault"
	EventDetected     = "detected"
	EventPromoted     = "promoted"
	EventHealed       = "healed"
	EventWritesBack   = "writes back"
	EventReadsBack    = "reads back"
	EventRerouteWrite = "reroute write"
	EventRerouteRead  = "reroute read"
	EventRejoined     = "old primary rejoined"
	// EventStoppedAnswering is when, in an observed cycle timed from when its writes
	// degraded (DrillCycle.FaultStart), the primary stopped answering as a writable node.
	EventStoppedAnswering = "primary stopped answering"
	// EventRestarted is when the primary, restarted in place (a new postmaster, no
	// failover), was seen accepting writes again.
	EventRestarted = "restarted in place"
	// EventWhole is when, before the fault on a cluster under Patroni, Patroni's view was
	// seen whole (a running leader, every member streaming, a synchronous standby in
	// synchronous_mode); its detail is the view.
	EventWhole = "Patroni whole"
	// EventNoSync is when the new primary was first seen accepting writes with no
	// synchronous standby; EventSyncBack when it first named one streaming (DrillSyncGap).
	EventNoSync   = "no synchronous standby"
	EventSyncBack = "synchronous standby back"
)

// DrillEvent is one moment of a cycle: what happened, when, and a detail.
type DrillEvent struct {
	At     time.Time `json:"at"`
	Event  string    `json:"event"`
	Detail string    `json:"detail,omitempty"`
}

// DrillTimeline counts the load's operations per interval of IntervalMS milliseconds from
// Start, by when each ended: acknowledged writes, failed writes (every error, also a
// connection refused), successful reads and failed reads. Lag is the replication lag
// sampled meanwhile (absent where it could not be read, as while no primary answered).
type DrillTimeline struct {
	Start       time.Time  `json:"start"`
	IntervalMS  int        `json:"interval_ms"`
	Writes      []int64    `json:"writes"`
	WriteErrors []int64    `json:"write_errors"`
	Reads       []int64    `json:"reads"`
	ReadErrors  []int64    `json:"read_errors"`
	Lag         []DrillLag `json:"lag,omitempty"`
}

// DrillLag is one sample of a standby's replication lag, as its primary saw it: the WAL
// it had not replayed yet.
type DrillLag struct {
	At       time.Time `json:"at"`
	Standby  string    `json:"standby"`
	LagBytes int64     `json:"lag_bytes"`
}

// DrillPatroni is how Patroni ran the drill's cluster: its timing in seconds, whether its
// synchronous_mode was on, and what kill-primary killed (postmaster, patroni or both).
type DrillPatroni struct {
	status.PatroniTiming
	// SynchronousModeStrict is Patroni's synchronous_mode_strict as its GET /config said at
	// the drill's start; absent when it could not be read.
	SynchronousModeStrict *bool  `json:"synchronous_mode_strict,omitempty"`
	Kill                  string `json:"kill,omitempty"`
}

// MaxLostIDs bounds DrillCycle.LostIDs.
const MaxLostIDs = 100

// DrillError is one failed operation of a drill's load.
type DrillError struct {
	At       time.Time `json:"at"`
	Op       string    `json:"op"`
	SQLState string    `json:"sqlstate"`
	Message  string    `json:"message"`
}

// DrillRun returns the run's drill section: nil when it has none.
func (r *Result) DrillRun() (*DrillRun, error) {
	return extraOf[DrillRun](r.ExtraOf, ExtraDrill)
}

// DrillCycle returns the step's drill section: nil when it has none.
func (s *Step) DrillCycle() (*DrillCycle, error) {
	return extraOf[DrillCycle](s.ExtraOf, ExtraDrill)
}
