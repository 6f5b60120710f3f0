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
// acknowledged and lost over the cycles checked (absent when none was), the times back, the
// failed checks and the verdict line.
func Summarize(run *result.DrillRun, steps []result.Step) {
	run.CyclesDone, run.Acked, run.Lost, run.InDoubt, run.InDoubtPresent = 0, nil, nil, nil, nil
	run.Failed = nil
	run.ChecksFailed, run.SyncWaitCycles, run.NoSyncCycles, run.NoSyncOpenCycles, run.NoSyncMax = 0, 0, 0, 0, nil
	run.NoSyncMaxOpen, run.NoSyncMeasuredCycles, run.RestartedInPlace = false, 0, 0
	var sum summing
	for i := range steps {
		dc, err := steps[i].DrillCycle()
		if err != nil || dc == nil {
			run.Failed = append(run.Failed, fmt.Sprintf("step %d: no drill figures (%v)", i, err))
			continue
		}
		lost, present, checked := dc.LostChecked()
		if !checked {
			run.Failed = append(run.Failed, fmt.Sprintf("cycle %d: not checked: %s", dc.Cycle, strings.Join(dc.Problems, "; ")))
			continue
		}
		run.CyclesDone++
		sum.totals.Acked += dc.Acked
		sum.totals.Lost += lost
		sum.totals.InDoubt += dc.InDoubt
		sum.totals.InDoubtPresent += present
		if lost > 0 {
			run.Failed = append(run.Failed, fmt.Sprintf("cycle %d: %d acknowledged %s lost", dc.Cycle, lost, commits(run)))
		}
		run.Failed = append(run.Failed, cycleFailures(run, dc)...)
		sum.add(run, dc)
	}
	if run.CyclesDone > 0 {
		t := sum.totals
		run.Acked, run.Lost, run.InDoubt, run.InDoubtPresent = &t.Acked, &t.Lost, &t.InDoubt, &t.InDoubtPresent
		if t.Acked == 0 {
			// No acknowledged commit, nothing that could be lost: the durability check did
			// not happen, which fails the run rather than passing it.
			run.Failed = append(run.Failed, fmt.Sprintf("no %s was acknowledged in %d checked cycle%s: durability not judged",
				strings.TrimSuffix(commits(run), "s"), run.CyclesDone, plural(run.CyclesDone)))
		}
	}
	run.WriteBackP50, run.WriteBackMax = p50max(sum.wb)
	run.ReadBackP50, run.ReadBackMax = p50max(sum.rb)
	run.WritesBlockedP50, run.WritesBlockedMax = p50max(sum.wblk)
	run.DetectP50, run.DetectMax = p50max(sum.det)
	run.Verdict = Verdict(run)
}

// summing is what Summarize gathers over the checked cycles beside the run's counts.
type summing struct {
	totals            result.DrillTotals
	wb, rb, wblk, det []float64
}

// add takes a checked cycle's times and its span without a synchronous standby.
func (s *summing) add(run *result.DrillRun, dc *result.DrillCycle) {
	for _, v := range []struct {
		x  *float64
		to *[]float64
	}{{dc.DetectSeconds, &s.det}, {dc.WritesBlockedSeconds, &s.wblk}, {dc.WriteBackSeconds, &s.wb}, {dc.ReadBackSeconds, &s.rb}} {
		if v.x != nil {
			*v.to = append(*v.to, *v.x)
		}
	}
	if dc.SyncWait != "" {
		run.SyncWaitCycles++
	}
	if restartedInPlace(dc) {
		run.RestartedInPlace++
	}
	g := dc.SyncGap
	if g == nil || g.NoSyncSeconds == nil {
		return
	}
	run.NoSyncMeasuredCycles++
	if *g.NoSyncSeconds > 0 {
		run.NoSyncCycles++
		if g.NoSyncOpen() { // still without a synchronous standby at the load's end
			run.NoSyncOpenCycles++
		}
	}
	switch v := *g.NoSyncSeconds; {
	case run.NoSyncMax == nil || v > *run.NoSyncMax:
		run.NoSyncMax, run.NoSyncMaxOpen = &v, g.NoSyncOpen()
	case v == *run.NoSyncMax && g.NoSyncOpen(): // as long, and still running: the longest is at least this
		run.NoSyncMaxOpen = true
	}
}

// cycleFailures are a checked cycle's failed checks beside a loss: consistency, writable
// nodes, a split brain, the old primary and the standbys, a fault that did not take effect.
func cycleFailures(run *result.DrillRun, dc *result.DrillCycle) []string {
	var out []string
	add := func(format string, a ...any) {
		out = append(out, fmt.Sprintf("cycle %d: "+format, append([]any{dc.Cycle}, a...)...))
	}
	if dc.TPCC != nil {
		if f := tpccFailed(dc.TPCC); len(f) > 0 {
			run.ChecksFailed++
			add("%s", strings.Join(f, "; "))
		}
	}
	if len(dc.Writable) != 1 {
		add("%d nodes accept writes", len(dc.Writable))
	}
	if dc.OldAckedAfterPromotion > 0 {
		add("split brain: %s acknowledged %d writes after %s was promoted", dc.From, dc.OldAckedAfterPromotion, dc.To)
	}
	if len(dc.SplitBrain) > 1 {
		add("split brain: %s accepted writes at once", strings.Join(dc.SplitBrain, " and "))
	}
	if !inPlace(dc.Fault) && !oldPrimaryBack(dc) {
		add("old primary %s %s", dc.From, dc.OldPrimary)
	}
	for _, s := range dc.NotStreaming {
		if inPlace(dc.Fault) || s != dc.From { // an old primary's failure is said above
			add("standby %s not streaming", s)
		}
	}
	if dc.FaultMissed != "" {
		add("the fault did not take effect: %s", dc.FaultMissed)
	}
	return out
}

// restartedInPlace is true when the cycle's primary came back on its own node (Patroni
// restarting a killed postmaster while it holds the leader key): a recovery, no failover.
func restartedInPlace(dc *result.DrillCycle) bool { return dc.To != "" && dc.To == dc.From }

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
	if inPlace(run.Fault) || run.RestartedInPlace > 0 {
		what = "cycle"
	}
	fault := run.Fault
	if run.Workload == WorkloadTPCC {
		fault += ", " + WorkloadTPCC
	}
	t, _ := run.Totals()
	if t.Acked == 0 {
		return fmt.Sprintf("%s commit: not judged: no %s was acknowledged in %d %s%s (%s)", run.Commit, strings.TrimSuffix(commits(run), "s"),
			run.CyclesDone, what, plural(run.CyclesDone), fault)
	}
	s := fmt.Sprintf("%s commit: %s of %s acknowledged %s lost in %d %s%s (%s)", run.Commit,
		units.GroupInt(t.Lost), units.GroupInt(t.Acked), commits(run), run.CyclesDone, what, plural(run.CyclesDone), fault)
	if run.Workload == WorkloadTPCC {
		if run.ChecksFailed == 0 {
			s += "; consistency checks passed"
		} else {
			s += fmt.Sprintf("; consistency checks FAILED in %d of %d cycles", run.ChecksFailed, run.CyclesDone)
		}
	}
	if run.RestartedInPlace > 0 {
		s += fmt.Sprintf("; in %d of %d the primary was restarted in place (no failover)", run.RestartedInPlace, run.CyclesDone)
	}
	if (inPlace(run.Fault) || run.RestartedInPlace > 0) && run.WritesBlockedP50 != nil {
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
	if t.InDoubt > 0 {
		s += fmt.Sprintf("; %s in doubt (%s of them committed)", units.GroupInt(t.InDoubt), units.GroupInt(t.InDoubtPresent))
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
