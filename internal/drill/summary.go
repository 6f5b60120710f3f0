package drill

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/stats"
	"github.com/agbench/agbench/internal/units"
)

// Summarize sums the drill's cycles (the steps' drill sections) into run: the commits
// acknowledged and lost over the cycles checked, the times back, the failed checks and the
// verdict line.
func Summarize(run *result.DrillRun, steps []result.Step) {
	run.CyclesDone, run.Acked, run.Lost, run.InDoubt, run.InDoubtPresent = 0, 0, 0, 0, 0
	run.Failed = nil
	run.ChecksFailed, run.SyncWaitCycles, run.NoSyncCycles, run.NoSyncOpenCycles, run.NoSyncMax = 0, 0, 0, 0, nil
	run.NoSyncMaxOpen, run.NoSyncMeasuredCycles = false, 0
	var wb, rb, wblk, det []float64
	open := 0 // cycles still without a synchronous standby at the load's end
	for i := range steps {
		dc, err := steps[i].DrillCycle()
		if err != nil || dc == nil {
			run.Failed = append(run.Failed, fmt.Sprintf("step %d: no drill figures (%v)", i, err))
			continue
		}
		if !dc.Checked {
			run.Failed = append(run.Failed, fmt.Sprintf("cycle %d: not checked: %s", dc.Cycle, strings.Join(dc.Problems, "; ")))
			continue
		}
		run.CyclesDone++
		run.Acked += dc.Acked
		run.Lost += dc.Lost
		run.InDoubt += dc.InDoubt
		run.InDoubtPresent += dc.InDoubtPresent
		if dc.Lost > 0 {
			run.Failed = append(run.Failed, fmt.Sprintf("cycle %d: %d acknowledged %s lost", dc.Cycle, dc.Lost, commits(run)))
		}
		if dc.TPCC != nil {
			if f := tpccFailed(dc.TPCC); len(f) > 0 {
				run.ChecksFailed++
				run.Failed = append(run.Failed, fmt.Sprintf("cycle %d: %s", dc.Cycle, strings.Join(f, "; ")))
			}
		}
		if len(dc.Writable) != 1 {
			run.Failed = append(run.Failed, fmt.Sprintf("cycle %d: %d nodes accept writes", dc.Cycle, len(dc.Writable)))
		}
		if dc.OldAckedAfterPromotion > 0 {
			run.Failed = append(run.Failed, fmt.Sprintf("cycle %d: split brain: %s acknowledged %d writes after %s was promoted", dc.Cycle, dc.From, dc.OldAckedAfterPromotion, dc.To))
		}
		if len(dc.SplitBrain) > 1 {
			run.Failed = append(run.Failed, fmt.Sprintf("cycle %d: split brain: %s accepted writes at once", dc.Cycle, strings.Join(dc.SplitBrain, " and ")))
		}
		if dc.DetectSeconds != nil {
			det = append(det, *dc.DetectSeconds)
		}
		if !inPlace(dc.Fault) && !oldPrimaryBack(dc) {
			run.Failed = append(run.Failed, fmt.Sprintf("cycle %d: old primary %s %s", dc.Cycle, dc.From, dc.OldPrimary))
		}
		for _, s := range dc.NotStreaming {
			if inPlace(dc.Fault) || s != dc.From { // an old primary's failure is said above
				run.Failed = append(run.Failed, fmt.Sprintf("cycle %d: standby %s not streaming", dc.Cycle, s))
			}
		}
		if dc.SyncWait != "" {
			run.SyncWaitCycles++
		}
		if g := dc.SyncGap; g != nil && g.NoSyncSeconds != nil {
			run.NoSyncMeasuredCycles++
			if *g.NoSyncSeconds > 0 {
				run.NoSyncCycles++
				if g.NoSyncOpen() {
					open++
				}
			}
			switch v := *g.NoSyncSeconds; {
			case run.NoSyncMax == nil || v > *run.NoSyncMax:
				run.NoSyncMax, run.NoSyncMaxOpen = &v, g.NoSyncOpen()
			case v == *run.NoSyncMax && g.NoSyncOpen(): // as long, and still running: the longest is at least this
				run.NoSyncMaxOpen = true
			}
		}
		if dc.FaultMissed != "" {
			run.Failed = append(run.Failed, fmt.Sprintf("cycle %d: the fault did not take effect: %s", dc.Cycle, dc.FaultMissed))
		}
		if dc.WritesBlockedSeconds != nil {
			wblk = append(wblk, *dc.WritesBlockedSeconds)
		}
		if dc.WriteBackSeconds != nil {
			wb = append(wb, *dc.WriteBackSeconds)
		}
		if dc.ReadBackSeconds != nil {
			rb = append(rb, *dc.ReadBackSeconds)
		}
	}
	if run.CyclesDone > 0 && run.Acked == 0 {
		// No acknowledged commit, nothing that could be lost: the durability check did
		// not happen, which fails the run rather than passing it.
		run.Failed = append(run.Failed, fmt.Sprintf("no %s was acknowledged in %d checked cycle%s: durability not judged",
			strings.TrimSuffix(commits(run), "s"), run.CyclesDone, plural(run.CyclesDone)))
	}
	run.WriteBackP50, run.WriteBackMax = p50max(wb)
	run.ReadBackP50, run.ReadBackMax = p50max(rb)
	run.WritesBlockedP50, run.WritesBlockedMax = p50max(wblk)
	run.DetectP50, run.DetectMax = p50max(det)
	run.NoSyncOpenCycles = open
	run.Verdict = Verdict(run)
}

func p50max(xs []float64) (*float64, *float64) {
	if len(xs) == 0 {
		return nil, nil
	}
	p, m := stats.Median(xs), slices.Max(xs)
	return &p, &m
}

// Verdict is the drill's one line: "sync commit: 0 of 41,220 acknowledged commits lost in
// 20 failovers (kill-primary); writes back after p50 1.4 s, max 2.1 s".
func Verdict(run *result.DrillRun) string {
	if run.CyclesDone == 0 {
		return fmt.Sprintf("%s commit: not judged: no cycle of %s was checked", run.Commit, run.Fault)
	}
	what := "failover"
	if inPlace(run.Fault) {
		what = "cycle"
	}
	fault := run.Fault
	if run.Workload == WorkloadTPCC {
		fault += ", " + WorkloadTPCC
	}
	if run.Acked == 0 {
		return fmt.Sprintf("%s commit: not judged: no %s was acknowledged in %d %s%s (%s)", run.Commit, strings.TrimSuffix(commits(run), "s"),
			run.CyclesDone, what, plural(run.CyclesDone), fault)
	}
	s := fmt.Sprintf("%s commit: %s of %s acknowledged %s lost in %d %s%s (%s)", run.Commit,
		units.GroupInt(run.Lost), units.GroupInt(run.Acked), commits(run), run.CyclesDone, what, plural(run.CyclesDone), fault)
	if run.Workload == WorkloadTPCC {
		if run.ChecksFailed == 0 {
			s += "; consistency checks passed"
		} else {
			s += fmt.Sprintf("; consistency checks FAILED in %d of %d cycles", run.ChecksFailed, run.CyclesDone)
		}
	}
	if inPlace(run.Fault) && run.WritesBlockedP50 != nil {
		s += fmt.Sprintf("; writes blocked p50 %.2f s, max %.2f s", *run.WritesBlockedP50, *run.WritesBlockedMax)
	}
	if run.DetectP50 != nil {
		s += fmt.Sprintf("; detected after p50 %.1f s, max %.1f s", *run.DetectP50, *run.DetectMax)
	}
	switch {
	case inPlace(run.Fault):
		// The primary stays: a write begun a moment after the fault may be acknowledged
		// before the fault bites, so the time without writes is the measure, said above.
		if run.WritesBlockedP50 == nil {
			s += "; writes blocked: – (no write acknowledged after a fault)"
		}
	case run.WriteBackP50 != nil:
		s += fmt.Sprintf("; writes back after p50 %.1f s, max %.1f s", *run.WriteBackP50, *run.WriteBackMax)
		if run.SyncWaitCycles > 0 {
			s += fmt.Sprintf(" (in %d of %d %s%s the new primary had no synchronous standby until the old primary rejoined: commits waited for it)",
				run.SyncWaitCycles, run.CyclesDone, what, plural(run.CyclesDone))
		}
	default:
		s += "; writes back: – (no write succeeded after a fault)"
	}
	if run.NoSyncCycles > 0 {
		measured := ""
		if run.NoSyncMeasuredCycles < run.CyclesDone { // the others' time is absent: not in the count
			measured = " measured"
		}
		atLeast := ""
		if run.NoSyncMaxOpen {
			atLeast = "at least "
		}
		s += fmt.Sprintf("; in %d of %d%s %s%s the new primary acknowledged commits with no synchronous standby (max %s%.1f s",
			run.NoSyncCycles, run.NoSyncMeasuredCycles, measured, what, plural(run.NoSyncMeasuredCycles), atLeast, *run.NoSyncMax)
		if run.NoSyncOpenCycles > 0 {
			s += fmt.Sprintf("; still none at the load's end in %d", run.NoSyncOpenCycles)
		}
		s += ")"
	}
	if run.ReadBackP50 != nil {
		s += fmt.Sprintf("; reads p50 %.1f s, max %.1f s", *run.ReadBackP50, *run.ReadBackMax)
	}
	if run.InDoubt > 0 {
		s += fmt.Sprintf("; %s in doubt (%s of them committed)", units.GroupInt(run.InDoubt), units.GroupInt(run.InDoubtPresent))
	}
	return s
}

// commits names what the run's acknowledged commits are: "commits" of the ledger, "New-Orders"
// of tpcc.
func commits(run *result.DrillRun) string {
	if run.Workload == WorkloadTPCC {
		return "New-Orders"
	}
	return "commits"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
