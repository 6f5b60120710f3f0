package report

import (
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/measure"
	"github.com/agbench/agbench/internal/result"
)

// A step of emulated terminals becomes a row of the terminals table: its shape, the rule it
// broke, tpmC against the bound, the response times and the queue's wait, the driver's
// memory; a peak RSS not read is "-", and a step without terminals has no row.
func TestTerminalsTable(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	hist := func(us ...int64) result.Hist {
		h := measure.NewHistogram()
		for _, v := range us {
			_ = h.RecordValue(v)
		}
		r, err := result.NewHist(h)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := &result.Result{Schema: 1, Complete: true, Meta: result.Meta{Command: "tpcc run"}}
	for i, terminals := range []int{0, 1000, 3000} {
		st := result.Step{Index: i, VUs: 50, Params: map[string]string{"vus": "50"}, Window: result.Window{Start: t0, End: t0.Add(time.Minute)},
			Complete: true, Ops: map[string]*result.Op{"NEWORD": {Count: 1200, Latency: hist(2000, 4000)}, "PAYMENT": {Count: 1150, Latency: hist(1000)}}}
		if terminals > 0 {
			if err := st.SetExtra(result.ExtraTerminals, result.TerminalsStep{Terminals: terminals, Sessions: 50, Warehouses: 100, ThinkScale: 1,
				TpmC: 1200, TpmCPerWarehouse: 12, QueueWait: map[string]result.Hist{"*": hist(100, 3000)}, QueuedAtEnd: 2,
				Driver: result.DriverMemory{HeapBytes: 64 << 20}}); err != nil {
				t.Fatal(err)
			}
		}
		r.Steps = append(r.Steps, st)
	}
	tb := build(t, NewRun("results/terminals", r))[0].TerminalsTable()
	if len(tb.Rows) != 2 {
		t.Fatalf("rows %v", tb.Rows)
	}
	row := func(i int) string {
		var s []string
		for _, c := range tb.Rows[i] {
			s = append(s, c.Text)
		}
		return strings.Join(s, "|")
	}
	if got := row(0); !strings.HasPrefix(got, "2|1,000|50|10|within|1,200|12|12.86|4.001|1|-|-|-|3.001|3.001|2|-|64") {
		t.Errorf("row of the specification's shape %s", got)
	}
	if got := row(1); !strings.HasPrefix(got, "3|3,000|50|30|outside: 3000 terminals on 100 warehouses") {
		t.Errorf("row of a driver-capacity step %s", got)
	}
}

// A segment's row says its terminals per warehouse of its own share of the warehouses,
// on which it judges the terminal rule (agbench merge judges the whole run's).
func TestTerminalsTableOfASegment(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &result.Result{Schema: 1, Complete: true, Meta: result.Meta{Command: "tpcc run", Segment: &result.Segment{Index: 1, Of: 3}}}
	st := result.Step{Params: map[string]string{result.SessionsKnob: "3", result.TerminalsKnob: "30"}, Complete: true,
		Window: result.Window{Start: t0, End: t0.Add(time.Minute)}, Ops: map[string]*result.Op{"NEWORD": {Count: 12}}}
	if err := st.SetExtra(result.ExtraTerminals, result.TerminalsStep{Terminals: 10, Sessions: 1, Warehouses: 3, SegmentWarehouses: 1,
		ThinkScale: 1, TpmC: 12, TpmCPerWarehouse: 12}); err != nil {
		t.Fatal(err)
	}
	r.Steps = []result.Step{st}
	tb := build(t, NewRun("results/segment", r))[0].TerminalsTable()
	var cells []string
	for _, c := range tb.Rows[0] {
		cells = append(cells, c.Text)
	}
	if got := strings.Join(cells, "|"); !strings.HasPrefix(got, "1|10|1|10|within|12|12|12.86") {
		t.Errorf("a segment's row %s", got)
	}
}
