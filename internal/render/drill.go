package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/table"
	"github.com/agbench/agbench/internal/units"
)

// Drill writes the table of cycles, the verdict and the cluster's state at the end.
func Drill(w io.Writer, r *result.Result, run *result.DrillRun) {
	fmt.Fprintln(w)
	tw := table.NewWriter(w, table.Right)
	tw.Row("cycle", "fault", "from", "to", "acked", "lost", "in doubt", "committed", "failover s", "detected s", "fenced s", "old acked", "writes back s", "writes blocked s", "no sync standby s", "reads back s", "reroute write s", "reroute read s", "WAL lacked", "errors/s by SQLSTATE", "after")
	for i := range r.Steps {
		st := &r.Steps[i]
		dc, err := st.DrillCycle()
		if err != nil || dc == nil {
			tw.Row(fmt.Sprint(i+1), "no figures: "+fmt.Sprint(err))
			continue
		}
		lost, committed := table.Absent, table.Absent
		if l, p, ok := dc.LostChecked(); ok {
			lost, committed = fmt.Sprint(l), fmt.Sprint(p)
		}
		tw.Row(fmt.Sprint(dc.Cycle), dc.Fault, dc.From, orAbsent(dc.To), fmt.Sprint(dc.Acked), lost, fmt.Sprint(dc.InDoubt), committed,
			seconds(dc.FailoverSeconds), seconds(dc.DetectSeconds), seconds(dc.FenceSeconds), oldAcked(dc), writesBack(dc), seconds(dc.WritesBlockedSeconds), orAbsent(NoSyncCell(dc.SyncGap)), seconds(dc.ReadBackSeconds),
			seconds(dc.RerouteWriteSeconds), seconds(dc.RerouteReadSeconds), walBytes(dc), errorRates(st), afterFault(dc))
	}
	tw.Flush()
	for i := range r.Steps {
		dc, _ := r.Steps[i].DrillCycle()
		if dc == nil {
			continue
		}
		if len(dc.LostIDs) > 0 {
			fmt.Fprintf(w, "cycle %d: lost acknowledged commits (ids, first %d): %v\n", dc.Cycle, len(dc.LostIDs), dc.LostIDs)
		}
		if dc.TPCC != nil {
			drillTPCC(w, dc)
		}
		if dc.FaultStart != "" {
			fmt.Fprintf(w, "cycle %d: fault timed from %s\n", dc.Cycle, dc.FaultStart)
		}
		if dc.HAOutcome != "" && run != nil && run.Patroni == nil { // under Patroni said with its timing below
			fmt.Fprintf(w, "cycle %d: %s\n", dc.Cycle, dc.HAOutcome)
		}
		if dc.SyncWait != "" {
			fmt.Fprintf(w, "cycle %d: * writes back: %s\n", dc.Cycle, dc.SyncWait)
		}
		if line := SyncGapSentence(dc.SyncGap); line != "" {
			fmt.Fprintf(w, "cycle %d: %s\n", dc.Cycle, line)
		}
		for _, p := range dc.Problems {
			fmt.Fprintf(w, "cycle %d: %s\n", dc.Cycle, p)
		}
	}
	NodeHostsBy(w, r.Steps, "cycle", drillCycleOf)
	if run == nil {
		return
	}
	drillPatroni(w, r, run)
	fmt.Fprintf(w, "\n%s\n", run.Verdict)
	for _, f := range run.Failed {
		fmt.Fprintf(w, "failed: %s\n", f)
	}
	fmt.Fprintf(w, "cluster at the end: %s\n", run.Left)
}

// drillTPCC writes a tpcc cycle's lost New-Orders and its consistency checks.
func drillTPCC(w io.Writer, dc *result.DrillCycle) {
	t := dc.TPCC
	if len(t.LostOrders) > 0 {
		fmt.Fprintf(w, "cycle %d: lost acknowledged New-Orders (warehouse/district/order, first %d): %s\n", dc.Cycle, len(t.LostOrders), strings.Join(t.LostOrders, " "))
	}
	if len(t.Checks) == 0 {
		return // why is among the cycle's problems
	}
	held := 0
	for _, c := range t.Checks {
		if c.Violations == 0 {
			held++
		}
	}
	fmt.Fprintf(w, "cycle %d: %s read-write transactions acknowledged; TPC-C consistency conditions: %d of %d hold\n",
		dc.Cycle, units.GroupInt(t.Transactions), held, len(t.Checks))
}

// walBytes is the WAL the new primary lacked, "0" after a planned failover (none by
// construction) and absent when it was not measured.
func walBytes(dc *result.DrillCycle) string {
	switch {
	case dc.WALBytesLacked != nil:
		return units.FormatBytesShort(*dc.WALBytesLacked)
	case dc.Fault == result.DrillFaultPlanned && dc.To != "":
		return "0"
	}
	return table.Absent
}

// afterFault is the state the fault left: the old primary's after a failover, the hit node's
// after a fault healed in place ("standby1 streaming").
func afterFault(dc *result.DrillCycle) string {
	if dc.To == "" && dc.Target != "" {
		return dc.Target + " " + orAbsent(dc.Healed)
	}
	if dc.To == "" && dc.Healed != "" {
		return dc.From + " " + dc.Healed
	}
	return orAbsent(dc.OldPrimary)
}

// oldAcked is the writes the old primary acknowledged after the fault ("12, 3 after the
// promotion" when it went on after it); absent when the cycle did not fail over.
func oldAcked(dc *result.DrillCycle) string {
	switch {
	case dc.To == "":
		return table.Absent
	case dc.OldAckedAfterPromotion > 0:
		return fmt.Sprintf("%d, %d after the promotion", dc.OldAcked, dc.OldAckedAfterPromotion)
	}
	return fmt.Sprint(dc.OldAcked)
}

// writesBack is the time until writes were back, marked "*" when the new primary's commits
// waited for the old primary to rejoin (said under the table).
func writesBack(dc *result.DrillCycle) string {
	if dc.SyncWait != "" && dc.WriteBackSeconds != nil {
		return seconds(dc.WriteBackSeconds) + "*"
	}
	return seconds(dc.WriteBackSeconds)
}

func orAbsent(s string) string {
	if s == "" {
		return table.Absent
	}
	return s
}

func seconds(v *float64) string {
	if v == nil {
		return table.Absent
	}
	return fmt.Sprintf("%.2f", *v)
}

// errorRates writes a step's errors per second of its window by SQLSTATE ("57P01 3.1, 08006 0.4");
// with no window to divide by, the rate is absent.
func errorRates(st *result.Step) string {
	if len(st.Errors) == 0 {
		return "0"
	}
	secs := st.Window.Seconds()
	if !(secs > 0) {
		return table.Absent
	}
	var parts []string
	for _, e := range st.Errors {
		parts = append(parts, fmt.Sprintf("%s %.1f", e.SQLState, float64(e.Count)/secs))
	}
	return strings.Join(parts, ", ")
}

// drillPatroni says, under Patroni, what Patroni did in each cycle and with which
// timing (nothing without Patroni).
func drillPatroni(w io.Writer, r *result.Result, run *result.DrillRun) {
	if run.Patroni == nil {
		return
	}
	pt := run.Patroni
	kill := ""
	if pt.Kill != "" {
		kill = ", kill-primary killed " + pt.Kill
	}
	fmt.Fprintf(w, "\nfailed over by Patroni (ttl %ds, loop_wait %ds, retry_timeout %ds, synchronous_mode %s%s); failover s is from the fault until Patroni's REST API showed the new primary running\n",
		pt.TTL, pt.LoopWait, pt.RetryTimeout, syncMode(pt), kill)
	for i := range r.Steps {
		dc, _ := r.Steps[i].DrillCycle()
		if dc == nil || dc.HAOutcome == "" {
			continue
		}
		tl := ""
		if dc.PGTimeline > 0 {
			tl = fmt.Sprintf(" (timeline %d)", dc.PGTimeline)
		}
		fmt.Fprintf(w, "cycle %d: %s%s\n", dc.Cycle, dc.HAOutcome, tl)
	}
}

// syncMode is Patroni's synchronous_mode and what its strictness means for commits when no
// synchronous standby is left; the strictness absent when GET /config was not read.
func syncMode(pt *result.DrillPatroni) string {
	switch {
	case !pt.SynchronousMode:
		return "off"
	case pt.SynchronousModeStrict == nil:
		return "on, synchronous_mode_strict – (GET /config not read)"
	case *pt.SynchronousModeStrict:
		return "on, strict: commits wait while no synchronous standby streams"
	}
	return "on, not strict: with no synchronous standby left, commits are acknowledged without one"
}

// drillCycleOf is a drill step's cycle, its position when it has no cycle's figures.
func drillCycleOf(st *result.Step) string {
	if dc, err := st.DrillCycle(); err == nil && dc != nil {
		return fmt.Sprint(dc.Cycle)
	}
	return fmt.Sprint(st.Index + 1)
}
