package merge

import (
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/agbench/agbench/internal/result"
)

// The segments' terminals sections merge: terminals, sessions and tpmC add up, the queue's
// waits merge exactly (the merged p90 is the union's), the driver's memory is the largest
// segment's, and a segment's own section is left as it was.
func TestMergeTerminals(t *testing.T) {
	t.Parallel()
	in, _ := segments(t, 3)
	union := hdrhistogram.New(1, 60_000_000, 3)
	for i, s := range in {
		h := hdrhistogram.New(1, 60_000_000, 3)
		for v := int64(1); v <= int64(100*(i+1)); v++ {
			_ = h.RecordValue(v * int64(i+1) * 10)
			_ = union.RecordValue(v * int64(i+1) * 10)
		}
		q, err := result.NewHist(h)
		if err != nil {
			t.Fatal(err)
		}
		rss := int64(100+i) << 20
		if err := s.Result.Steps[0].SetExtra(result.ExtraTerminals, result.TerminalsStep{Terminals: 333 + i%2, Sessions: 17, Warehouses: 100,
			ThinkScale: 1, TpmC: 400, QueueWait: map[string]result.Hist{"*": q}, QueuedAtEnd: 1,
			Driver: result.DriverMemory{PeakRSSBytes: &rss, HeapBytes: int64(50-i) << 20}}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := Merge(in)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := m.Steps[0].Terminals()
	if err != nil || ts == nil {
		t.Fatalf("merged section %v, %v", ts, err)
	}
	if ts.Terminals != 1000 || ts.Sessions != 51 || ts.TpmC != 1200 || ts.TpmCPerWarehouse != 12 || ts.QueuedAtEnd != 3 || !ts.TerminalRuleHolds() {
		t.Errorf("merged terminals %d, sessions %d, tpmC %v (%v per warehouse), queued %d",
			ts.Terminals, ts.Sessions, ts.TpmC, ts.TpmCPerWarehouse, ts.QueuedAtEnd)
	}
	if q := ts.QueueWait["*"]; q.Count != union.TotalCount() || q.P90 != union.ValueAtQuantile(90) {
		t.Errorf("merged queue wait: %d values, p90 %d; union %d, %d", q.Count, q.P90, union.TotalCount(), union.ValueAtQuantile(90))
	}
	if d := ts.Driver; d.PeakRSSBytes == nil || *d.PeakRSSBytes != 102<<20 || d.HeapBytes != 50<<20 {
		t.Errorf("merged driver memory %+v", d)
	}
	if own, _ := in[0].Result.Steps[0].Terminals(); own.Terminals != 333 {
		t.Errorf("segment 0's own section changed: %d terminals", own.Terminals)
	}
	other, _ := segments(t, 3)
	for i, s := range other {
		_ = s.Result.Steps[0].SetExtra(result.ExtraTerminals, result.TerminalsStep{Terminals: 10, Warehouses: 1 + i, ThinkScale: 1})
	}
	if _, err := Merge(other); err == nil {
		t.Error("segments of different warehouses merged")
	}
}
