package render

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/table"
)

// A step whose window has no length has no error rate: "–", not "+Inf".
func TestDrillErrorRatesOfAnEmptyWindow(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st := &result.Step{Window: result.Window{Start: at, End: at}, Errors: []result.ErrorClass{{SQLState: "57P01", Count: 3}}}
	if got := errorRates(st); got != table.Absent {
		t.Errorf("0-second window: %q, want %q", got, table.Absent)
	}
	st.Window.End = at.Add(2 * time.Second)
	if got := errorRates(st); got != "57P01 1.5" {
		t.Errorf("2-second window: %q, want %q", got, "57P01 1.5")
	}
}

// olderDrill is a recorded drill under Patroni (two kill-primary cycles) from before agbench
// measured the new primary's synchronous standbys.
func olderDrill(t *testing.T) *result.Result {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(recordedDir, "older", "drill-before-sync-gap.json"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := result.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func drillText(t *testing.T, r *result.Result) string {
	t.Helper()
	run, err := r.DrillRun()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	Drill(&b, r, run)
	return b.String()
}

// The recorded drill's cycles, Patroni's part and the verdict, as `agbench drill` printed
// them; the time without a synchronous standby, never measured then, is absent ("–").
func TestDrillOfARecordedResult(t *testing.T) {
	out := drillText(t, olderDrill(t))
	checkGolden(t, "drill-older", out)
	for _, want := range []string{"failed over by Patroni (ttl 10s", "cluster at the end: whole:"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "synchronous standby for") {
		t.Errorf("a time without a synchronous standby that was never measured:\n%s", out)
	}
}

// The lines under the table of a cycle that lost commits, waited for its old primary and
// acknowledged commits with no synchronous standby until the load's end: the cell and the
// sentence say the same ("+" and "at least").
func TestDrillSyncGapLines(t *testing.T) {
	r := olderDrill(t)
	dc, err := r.Steps[0].DrillCycle()
	if err != nil {
		t.Fatal(err)
	}
	f := func(v float64) *float64 { return &v }
	dc.SyncGap = &result.DrillSyncGap{Node: "standby1", Samples: 20, NoSyncSeconds: f(4.2), NoSyncFrom: f(1.1),
		NoSyncTo: f(5.3), NoSyncAcked: 12, Open: true, Cause: "Patroni synchronous_mode without strict"}
	dc.SyncWait = "standby1 had no synchronous standby until primary rejoined as one"
	lost := int64(2)
	dc.LostIDs, dc.Lost, dc.Problems = []int64{7, 9}, &lost, []string{"a problem the drill saw"}
	if err := r.Steps[0].SetExtra(result.ExtraDrill, dc); err != nil {
		t.Fatal(err)
	}
	out := drillText(t, r)
	checkGolden(t, "drill-sync-gap", out)
	sentence := SyncGapSentence(dc.SyncGap)
	for _, want := range []string{" 4.20+ ", "cycle 1: " + sentence + "\n", "for at least 4.2 s (from 1.1 s to the load's end, still none: Patroni",
		"12 commits acknowledged by standby1 alone", "cycle 1: * writes back: standby1 had", "cycle 1: lost acknowledged commits (ids, first 2): [7 9]"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
}
