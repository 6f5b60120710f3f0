package readahead

import (
	"reflect"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// The experiment's run section (RunExtra, the table and the conditions) and each step's
// plan go through a result file and come back as written: RunExtra is result.ReadaheadRun,
// the one type the report reads the article's table with.
func TestRunSectionRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	q := Query{Name: "full", Title: "full scan", Node: "Seq Scan"}
	var ms []Measurement
	for i, on := range []bool{false, true} {
		ms = append(ms, Measurement{Query: q.Name, Prefetch: on, Start: t0, ElapsedMs: 900 - 600*float64(i), Cold: true, NodeOK: true,
			Plan: PlanStats{SharedHit: 5, SharedRead: 8000, IOReadMs: 700}, IOOps: 100, IOBytes: 8000 * 8192})
	}
	res := result.New("readahead", "test", nil)
	for i, m := range ms {
		st, err := m.Step(i, 0)
		if err != nil {
			t.Fatal(err)
		}
		res.Steps = append(res.Steps, st)
	}
	want := RunExtra{Conditions: Conditions{ServerVersion: "17.2", ColdMethod: "evict", Relations: map[string]int64{"t": 1 << 20}},
		Table: Summarize([]Query{q}, ms)}
	if err := res.SetExtra(ExtraKey, want); err != nil {
		t.Fatal(err)
	}
	res.Finish(nil)
	dir := t.TempDir()
	if _, err := result.Write(dir, res); err != nil {
		t.Fatal(err)
	}
	back, err := result.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := back.ReadaheadRun()
	if err != nil || got == nil || !reflect.DeepEqual(*got, want) {
		t.Fatalf("read back %+v (%v)\nwritten %+v", got, err, want)
	}
	var plan PlanStats
	if ok, err := back.Steps[1].ExtraOf(ExtraKey, &plan); !ok || err != nil || plan.SharedRead != 8000 {
		t.Fatalf("step plan %+v %v %v", plan, ok, err)
	}
}
