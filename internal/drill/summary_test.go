package drill

import (
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/result"
)

func cycleStep(t *testing.T, dc result.DrillCycle) result.Step {
	t.Helper()
	var st result.Step
	if err := st.SetExtra(result.ExtraDrill, dc); err != nil {
		t.Fatal(err)
	}
	return st
}

func f(v float64) *float64 { return &v }

func n(v int64) *int64 { return &v }

// The sum counts only checked cycles, a loss fails the run, and a time nobody measured is
// absent from the verdict rather than 0.
func TestSummarize(t *testing.T) {
	ok := result.DrillCycle{Cycle: 1, Checked: true, Acked: 1000, Writable: []string{"s1"}, OldPrimary: "streaming",
		WriteBackSeconds: f(1.0), ReadBackSeconds: f(0.1)}
	lost := result.DrillCycle{Cycle: 2, Checked: true, Acked: 500, Lost: n(3), InDoubt: 8, InDoubtPresent: n(2),
		Writable: []string{"p"}, OldPrimary: "streaming", WriteBackSeconds: f(3.0)}
	unchecked := result.DrillCycle{Cycle: 3, Acked: 77, Problems: []string{"kill p: refused"}}
	run := &result.DrillRun{Fault: FaultKillPrimary, Commit: "async", Cycles: 3}
	Summarize(run, []result.Step{cycleStep(t, ok), cycleStep(t, lost), cycleStep(t, unchecked)})
	if tot, ok := run.Totals(); !ok || run.CyclesDone != 2 || tot != (result.DrillTotals{Acked: 1500, Lost: 3, InDoubt: 8, InDoubtPresent: 2}) {
		t.Fatalf("sum %+v", run)
	}
	if *run.WriteBackP50 != 2.0 || *run.WriteBackMax != 3.0 || *run.ReadBackMax != 0.1 || len(run.Failed) != 2 {
		t.Fatalf("times %v %v %v, failed %v", *run.WriteBackP50, *run.WriteBackMax, *run.ReadBackMax, run.Failed)
	}
	want := "async commit: 3 of 1,500 acknowledged commits lost in 2 failovers (kill-primary); writes back after p50 2.0 s, max 3.0 s; reads p50 0.1 s, max 0.1 s; 8 in doubt (2 of them committed)"
	if run.Verdict != want {
		t.Fatalf("verdict\n%q\nwant\n%q", run.Verdict, want)
	}

	none := &result.DrillRun{Fault: FaultPlanned, Commit: "sync", Cycles: 1}
	Summarize(none, []result.Step{cycleStep(t, result.DrillCycle{Cycle: 1, Checked: true, Acked: 10, Writable: []string{"p"}, OldPrimary: "streaming"})})
	if none.WriteBackP50 != nil || none.Verdict != "sync commit: 0 of 10 acknowledged commits lost in 1 failover (planned); writes back: – (no write succeeded after a fault)" {
		t.Fatalf("absent times: %q", none.Verdict)
	}
	// No acknowledged commit is no durability check: not judged, and a failure.
	unacked := &result.DrillRun{Fault: FaultPlanned, Commit: "sync", Cycles: 2}
	Summarize(unacked, []result.Step{cycleStep(t, result.DrillCycle{Cycle: 1, Checked: true, Writable: []string{"p"}, OldPrimary: "streaming"}),
		cycleStep(t, result.DrillCycle{Cycle: 2, Checked: true, Writable: []string{"p"}, OldPrimary: "streaming"})})
	if unacked.Verdict != "sync commit: not judged: no commit was acknowledged in 2 failovers (planned)" {
		t.Fatalf("no acknowledged commit: %q", unacked.Verdict)
	}
	if len(unacked.Failed) != 1 || unacked.Failed[0] != "no commit was acknowledged in 2 checked cycles: durability not judged" {
		t.Fatalf("no acknowledged commit must fail the run: %q", unacked.Failed)
	}
	// One synchronous standby: writes back when the old primary rejoined, said in words.
	waited := &result.DrillRun{Fault: FaultKillPrimary, Commit: "sync", Cycles: 2}
	Summarize(waited, []result.Step{
		cycleStep(t, result.DrillCycle{Cycle: 1, Checked: true, Acked: 10, Writable: []string{"s1"}, OldPrimary: "streaming", WriteBackSeconds: f(2), SyncWait: "s1 had no synchronous standby until p rejoined"}),
		cycleStep(t, result.DrillCycle{Cycle: 2, Checked: true, Acked: 10, Writable: []string{"p"}, OldPrimary: "streaming", WriteBackSeconds: f(1)})})
	if want := "sync commit: 0 of 20 acknowledged commits lost in 2 failovers (kill-primary); writes back after p50 1.5 s, max 2.0 s (in 1 of 2 failovers the new primary had no synchronous standby until the old primary rejoined: commits waited for it)"; waited.Verdict != want || waited.SyncWaitCycles != 1 {
		t.Fatalf("sync wait: %d cycles, verdict\n%q\nwant\n%q", waited.SyncWaitCycles, waited.Verdict, want)
	}
	// Patroni without strict: the longest time without a synchronous standby, a cycle still
	// open at the load's end said so; a cycle never sampled is no 0 s, nor part of the count
	// ("of 2 measured", not "of 3").
	gaps := &result.DrillRun{Fault: FaultKillPrimary, Commit: "sync", Cycles: 3}
	gap := func(n int, g result.DrillSyncGap) result.Step {
		return cycleStep(t, result.DrillCycle{Cycle: n, Checked: true, Acked: 10, Writable: []string{"p"}, OldPrimary: "streaming", WriteBackSeconds: f(1), SyncGap: &g})
	}
	Summarize(gaps, []result.Step{gap(1, result.DrillSyncGap{NoSyncSeconds: f(12.3)}), gap(2, result.DrillSyncGap{NoSyncSeconds: f(0.4), NoSyncFrom: f(5.6), NoSyncTo: f(6), Open: true}),
		gap(3, result.DrillSyncGap{Note: "not measured: x"})})
	if want := "sync commit: 0 of 30 acknowledged commits lost in 3 failovers (kill-primary); writes back after p50 1.0 s, max 1.0 s; in 2 of 2 measured failovers the new primary acknowledged commits with no synchronous standby (max 12.3 s; still none at the load's end in 1)"; gaps.Verdict != want || gaps.NoSyncCycles != 2 || gaps.NoSyncMeasuredCycles != 2 || gaps.NoSyncMaxOpen {
		t.Fatalf("no sync: %d cycles, verdict\n%q\nwant\n%q", gaps.NoSyncCycles, gaps.Verdict, want)
	}
	// The longest still running at the load's end: a lower bound, said so.
	Summarize(gaps, []result.Step{gap(1, result.DrillSyncGap{NoSyncSeconds: f(2.1), NoSyncFrom: f(1), NoSyncTo: f(3.1)}),
		gap(2, result.DrillSyncGap{NoSyncSeconds: f(4.5), NoSyncFrom: f(1.5), NoSyncTo: f(6), Open: true})})
	if want := "in 2 of 2 failovers the new primary acknowledged commits with no synchronous standby (max at least 4.5 s; still none at the load's end in 1)"; !strings.HasSuffix(gaps.Verdict, want) || !gaps.NoSyncMaxOpen {
		t.Fatalf("open longest: verdict\n%q\nwant the end\n%q", gaps.Verdict, want)
	}
	empty := &result.DrillRun{Fault: FaultPlanned, Commit: "sync", Cycles: 1}
	Summarize(empty, nil)
	if empty.Verdict != "sync commit: not judged: no cycle of planned was checked" {
		t.Fatalf("no cycle: %q", empty.Verdict)
	}
}

// A fault healed in place (kill-standby) has no old primary to judge: a standby not
// streaming fails it, and its verdict gives the time writes were blocked, not writes back.
func TestSummarizeInPlace(t *testing.T) {
	ok := result.DrillCycle{Cycle: 1, Fault: FaultKillStandby, Checked: true, Acked: 100, Writable: []string{"p"},
		Target: "s1", Healed: "streaming", WriteBackSeconds: f(0), WritesBlockedSeconds: f(0.2)}
	stuck := result.DrillCycle{Cycle: 2, Fault: FaultKillStandby, Checked: true, Acked: 50, Writable: []string{"p"},
		Target: "s2", Healed: "not streaming: x", NotStreaming: []string{"s2"}, WriteBackSeconds: f(0), WritesBlockedSeconds: f(0.6)}
	run := &result.DrillRun{Fault: FaultKillStandby, Commit: "sync", Cycles: 2}
	Summarize(run, []result.Step{cycleStep(t, ok), cycleStep(t, stuck)})
	if len(run.Failed) != 1 || run.Failed[0] != "cycle 2: standby s2 not streaming" {
		t.Fatalf("failed %q", run.Failed)
	}
	want := "sync commit: 0 of 150 acknowledged commits lost in 2 cycles (kill-standby); writes blocked p50 0.40 s, max 0.60 s"
	if run.Verdict != want {
		t.Fatalf("verdict\n%q\nwant\n%q", run.Verdict, want)
	}
}
