package drill

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/render"
	"github.com/agbench/agbench/internal/result"
)

// sampled feeds a tally the sampler's samples: each state held from..to seconds after the
// fault, one sample every 200 ms.
func sampled(ta *tally, fault time.Time, states ...struct {
	from, to float64
	s        syncState
}) {
	for _, st := range states {
		for x := st.from; x <= st.to+1e-9; x += 0.2 {
			s := st.s
			s.from = fault.Add(time.Duration(x * float64(time.Second)))
			s.to = s.from
			ta.syncSample(s)
		}
	}
}

type heldState = struct {
	from, to float64
	s        syncState
}

func TestSyncGapWithoutStrict(t *testing.T) {
	fault := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ta := newTally(fault.Add(-time.Second))
	ta.fault(fault)
	old, nw := 5432, 5433
	sampled(ta, fault,
		heldState{-1, -0.2, syncState{srv: server{port: old}, primary: true, names: `"standby1"`, commit: "on", sync: []string{"standby1"}}},
		heldState{4.1, 16.2, syncState{srv: server{port: nw}, primary: true, names: "", commit: "on"}},
		heldState{16.4, 20, syncState{srv: server{port: nw}, primary: true, names: `"primary"`, commit: "on", sync: []string{"primary"}}})
	for _, at := range []float64{3, 5, 16.3, 17} { // 5 and 16.3 within the span
		a := fault.Add(time.Duration(at * float64(time.Second)))
		ta.acks = append(ta.acks, ack{began: a, at: a, srv: server{port: nw}})
	}
	g := ta.syncGap("standby1", server{port: nw}, "primary", "Patroni synchronous_mode without strict", fault.Add(21*time.Second))
	if g.Note != "" || g.NoSyncSeconds == nil || g.SyncAt == nil {
		t.Fatalf("gap %+v", g)
	}
	near := func(v *float64, want float64) bool { return v != nil && *v > want-0.01 && *v < want+0.01 }
	if !near(g.NoSyncSeconds, 12.3) || !near(g.NoSyncFrom, 4.1) || !near(g.NoSyncTo, 16.4) || !near(g.SyncAt, 16.4) || g.NoSyncAcked != 2 {
		t.Fatalf("no sync %v from %v to %v, sync at %v, acked %d", *g.NoSyncSeconds, *g.NoSyncFrom, *g.NoSyncTo, *g.SyncAt, g.NoSyncAcked)
	}
	if *g.WaitedSeconds != 0 || g.OldPrimary != "primary" || g.Open {
		t.Fatalf("waited %v, old primary %q, open %v", *g.WaitedSeconds, g.OldPrimary, g.Open)
	}
	want := "after the failover, commits were acknowledged with no synchronous standby for 12.3 s (from 4.1 s to 16.4 s: Patroni synchronous_mode without strict; primary, the old primary, rejoined as its synchronous standby at 16.4 s); 2 commits acknowledged by standby1 alone meanwhile"
	if got := render.SyncGapSentence(g); got != want {
		t.Fatalf("sentence\n%s\nwant\n%s", got, want)
	}
	var events []string
	for _, e := range ta.events {
		events = append(events, e.Event)
	}
	if strings.Join(events, ",") != strings.Join([]string{result.EventFault, result.EventSyncBack, result.EventNoSync}, ",") {
		t.Fatalf("events %v", events)
	}
}

// Without strict, as the old primary rejoins Patroni names it in synchronous_standby_names;
// until its walsender reads the setting it streams as async, and a sample or two say commits
// wait (seen in CI: the drill said "commits waited for it" of a cycle whose new primary had
// acknowledged commits alone for 25 s). That wait is told, after the span without one, and is
// not taken for strict mode's wait for the old primary.
func TestSyncGapHandoverWaitIsNotStrict(t *testing.T) {
	fault := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ta := newTally(fault)
	ta.fault(fault)
	sampled(ta, fault,
		heldState{4.1, 16.2, syncState{srv: server{port: 2}, primary: true, names: "", commit: "on"}},
		heldState{16.4, 16.4, syncState{srv: server{port: 2}, primary: true, names: `"a"`, commit: "on"}},
		heldState{16.6, 20, syncState{srv: server{port: 2}, primary: true, names: `"a"`, commit: "on", sync: []string{"a"}}})
	g := ta.syncGap("b", server{port: 2}, "a", "Patroni synchronous_mode without strict", fault.Add(21*time.Second))
	near := func(v *float64, want float64) bool { return v != nil && *v > want-0.01 && *v < want+0.01 }
	if !near(g.NoSyncSeconds, 12.3) || !near(g.NoSyncTo, 16.4) || !near(g.WaitedSeconds, 0.2) || !near(g.WaitedFrom, 16.4) ||
		!near(g.WaitedTo, 16.6) || !near(g.SyncAt, 16.6) || g.OldPrimary != "a" || g.Open {
		t.Fatalf("gap %+v", g)
	}
	want := "after the failover, commits were acknowledged with no synchronous standby for 12.3 s (from 4.1 s to 16.4 s: Patroni synchronous_mode without strict; a, the old primary, rejoined as its synchronous standby at 16.6 s); commits waited for a synchronous standby 0.2 s (from 16.4 s to 16.6 s)"
	if got := render.SyncGapSentence(g); got != want {
		t.Fatalf("sentence\n%s\nwant\n%s", got, want)
	}
	dc := &result.DrillCycle{SyncGap: g}
	if waitedForOldPrimary(dc); dc.SyncWait != "" {
		t.Fatalf("a handover's wait taken for strict mode's: %q", dc.SyncWait)
	}
}

// With synchronous_mode_strict the new primary names '*' and commits wait: no span without a
// synchronous standby, the wait measured instead.
func TestSyncGapStrictWaits(t *testing.T) {
	fault := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ta := newTally(fault)
	ta.fault(fault)
	sampled(ta, fault,
		heldState{3, 9.8, syncState{srv: server{port: 2}, primary: true, names: "*", commit: "on"}},
		heldState{10, 11, syncState{srv: server{port: 2}, primary: true, names: `"a"`, commit: "on", sync: []string{"a"}}})
	g := ta.syncGap("b", server{port: 2}, "a", "Patroni synchronous_mode_strict", fault.Add(12*time.Second))
	if *g.NoSyncSeconds != 0 || g.NoSyncFrom != nil || g.WaitedSeconds == nil || *g.WaitedSeconds < 6.99 || *g.WaitedSeconds > 7.01 {
		t.Fatalf("gap %+v", g)
	}
	if s := render.SyncGapSentence(g); !strings.HasPrefix(s, "after the failover, commits waited for a synchronous standby for 7.0 s (from 3.0 s to 10.0 s: Patroni synchronous_mode_strict;") {
		t.Fatalf("sentence %q", s)
	}
	// The old primary ended the wait: the cycle's writes were back only when it rejoined,
	// which the table's "*" and the verdict say.
	dc := &result.DrillCycle{SyncGap: g}
	waitedForOldPrimary(dc)
	if dc.SyncWait != "b had no synchronous standby until a rejoined as one: commits waited for it 7.0 s (Patroni synchronous_mode_strict)" {
		t.Fatalf("sync wait %q", dc.SyncWait)
	}
}

// Absent is not zero: a new primary never sampled has no figures, and says why; one still
// without a synchronous standby at the load's end is an open span.
func TestSyncGapAbsentAndOpen(t *testing.T) {
	fault := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ta := newTally(fault)
	ta.fault(fault)
	ta.syncMissed(errString("connection refused"))
	ta.syncErrAt = fault.Add(time.Second / 2) // the sampler's error came before the samples below
	g := ta.syncGap("b", server{port: 2}, "a", "", fault.Add(6*time.Second))
	if g.NoSyncSeconds != nil || g.WaitedSeconds != nil || !strings.Contains(g.Note, "connection refused") || g.NoSync() != nil {
		t.Fatalf("gap %+v", g)
	}
	if s := render.SyncGapSentence(g); !strings.Contains(s, "–") {
		t.Fatalf("sentence %q", s)
	}
	// Still without one at the last sample: it held until the load's end, as far as anyone
	// looked (one last sample alone is no 0 s span).
	sampled(ta, fault, heldState{1, 5, syncState{srv: server{port: 2}, primary: true, names: "", commit: "on"}})
	g = ta.syncGap("b", server{port: 2}, "a", "", fault.Add(6*time.Second))
	if !g.Open || g.SyncAt != nil || *g.NoSyncSeconds < 4.99 || *g.NoSyncSeconds > 5.01 || render.NoSyncCell(g) != "5.00+" ||
		!strings.Contains(render.SyncGapSentence(g), "for at least 5.0 s (from 1.0 s to the load's end, still none: synchronous_standby_names empty") {
		t.Fatalf("gap %+v: %s", g, render.SyncGapSentence(g))
	}
	// The sampler failed after its last sample: nobody saw the state after it. The span ends
	// at that sample, still a lower bound, and does not claim the load's end.
	ta.syncMissed(errString("connection reset"))
	ta.syncErrAt = fault.Add(5500 * time.Millisecond)
	g = ta.syncGap("b", server{port: 2}, "a", "", fault.Add(60*time.Second))
	if !g.Open || !g.NoSyncOpen() || *g.NoSyncSeconds < 3.99 || *g.NoSyncSeconds > 4.01 || render.NoSyncCell(g) != "4.00+" ||
		!strings.Contains(render.SyncGapSentence(g), "for at least 4.0 s (from 1.0 s to its last sample at 5.0 s, still none then: synchronous_standby_names empty") {
		t.Fatalf("blind after the last sample: gap %+v: %s", g, render.SyncGapSentence(g))
	}
	// Nor when it read another node after it (the write address moved on).
	ta = newTally(fault)
	ta.fault(fault)
	sampled(ta, fault, heldState{1, 5, syncState{srv: server{port: 2}, primary: true, names: "", commit: "on"}},
		heldState{5.2, 5.4, syncState{srv: server{port: 3}, primary: true, names: "", commit: "on"}})
	if g = ta.syncGap("b", server{port: 2}, "a", "", fault.Add(60*time.Second)); *g.NoSyncSeconds > 4.01 || !g.NoSyncOpen() {
		t.Fatalf("another node read after the last sample: gap %+v: %s", g, render.SyncGapSentence(g))
	}
	var none *result.DrillSyncGap
	if render.SyncGapSentence(none) != "" || none.NoSync() != nil {
		t.Fatal("a nil gap says something")
	}
}

// A span without a synchronous standby followed by a wait still running at the load's end:
// the wait is the open span (a lower bound), the time without one is exact: no "at least",
// no "+", and the cycle is not counted as still without one.
func TestSyncGapOpenWaitAfterNoSync(t *testing.T) {
	fault := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ta := newTally(fault)
	ta.fault(fault)
	sampled(ta, fault,
		heldState{1, 3, syncState{srv: server{port: 2}, primary: true, names: "", commit: "on"}},
		heldState{3.2, 5, syncState{srv: server{port: 2}, primary: true, names: `"a"`, commit: "on"}})
	g := ta.syncGap("b", server{port: 2}, "a", "", fault.Add(6*time.Second))
	if !g.Open || g.NoSyncOpen() || !g.WaitedOpen() || render.NoSyncCell(g) != "2.20" {
		t.Fatalf("gap %+v: no sync open %v, waited open %v, cell %q", g, g.NoSyncOpen(), g.WaitedOpen(), render.NoSyncCell(g))
	}
	want := "after the failover, commits were acknowledged with no synchronous standby for 2.2 s (from 1.0 s to 3.2 s: synchronous_standby_names empty); " +
		"commits waited for a synchronous standby at least 2.8 s (from 3.2 s to the load's end, still none)"
	if got := render.SyncGapSentence(g); got != want {
		t.Fatalf("sentence\n%s\nwant\n%s", got, want)
	}
	run := &result.DrillRun{Fault: FaultKillPrimary, Commit: "sync"}
	var st result.Step
	if err := st.SetExtra(result.ExtraDrill, result.DrillCycle{Cycle: 1, Checked: true, Acked: 10, Writable: []string{"b"}, OldPrimary: "streaming", SyncGap: g}); err != nil {
		t.Fatal(err)
	}
	Summarize(run, []result.Step{st})
	if run.NoSyncCycles != 1 || run.NoSyncOpenCycles != 0 || strings.Contains(run.Verdict, "still none") {
		t.Fatalf("%d cycles, %d open: %q", run.NoSyncCycles, run.NoSyncOpenCycles, run.Verdict)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// observe on a cluster under Patroni: GET /config's synchronous_mode makes the cluster's
// commit sync even when its primary named no synchronous standby at the start (Patroni's
// view not whole yet), so that the new primary's time without one is measured, not skipped
// as an asynchronous cluster's.
func TestObservedCommitFollowsPatroniSyncMode(t *testing.T) {
	config := `{"ttl":10,"loop_wait":2,"retry_timeout":4,"synchronous_mode":true}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/config" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(config))
	}))
	defer srv.Close()
	strict, cause, syncMode := patroniSync(context.Background(), []string{"http://127.0.0.1:1", srv.URL})
	if strict == nil || *strict || !syncMode || cause != "Patroni synchronous_mode without strict" {
		t.Fatalf("strict %v, cause %q, synchronous_mode %v", strict, cause, syncMode)
	}
	if got := observedCommit("async", syncMode); got != "sync" {
		t.Fatalf("primary says async under Patroni's synchronous_mode: %s, want sync", got)
	}
	config = `{"synchronous_mode":false}`
	if _, _, syncMode = patroniSync(context.Background(), []string{srv.URL}); syncMode || observedCommit("async", syncMode) != "async" || observedCommit("sync", syncMode) != "sync" {
		t.Fatal("without synchronous_mode the primary's own settings decide")
	}
	if _, _, syncMode = patroniSync(context.Background(), []string{"http://127.0.0.1:1"}); syncMode {
		t.Fatal("no REST API answered, yet synchronous_mode")
	}
}
