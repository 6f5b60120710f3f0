package sample

import (
	"context"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
)

func TestClassifyWait(t *testing.T) {
	cases := []struct{ typ, event, state, want string }{
		{"", "", "active", WaitCPU},
		{"IO", "WALSync", "active", WaitLog},
		{"IO", "WALWrite", "active", WaitLog},
		{"LWLock", "WALWrite", "active", WaitLog},
		{"LWLock", "WALInsert", "active", WaitLog},
		{"IO", "DataFileRead", "active", WaitDataRead},
		{"IO", "DataFileExtend", "active", WaitOtherIO},
		{"LWLock", "BufferMapping", "active", WaitLWLock},
		{"Lock", "transactionid", "active", WaitLock},
		{"Client", "ClientRead", "active", WaitClient},
		{"Client", "ClientRead", "idle in transaction", WaitClient},
		{"", "", "idle in transaction (aborted)", WaitClient},
		{"IPC", "SyncRep", "active", WaitSyncRep},
		{"IPC", "MessageQueueReceive", "active", WaitOther},
		{"Timeout", "PgSleep", "active", WaitOther},
	}
	for _, c := range cases {
		if got := ClassifyWait(c.typ, c.event, c.state); got != c.want {
			t.Errorf("ClassifyWait(%q, %q, %q) = %q, want %q", c.typ, c.event, c.state, got, c.want)
		}
	}
}

// The OS sampler beside a window on this machine: series with points, means in range.
func TestOSStepOnThisMachine(t *testing.T) {
	o, err := NewOSStep(OSConfig{Paths: []string{t.TempDir()}}, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	st := &result.Step{Window: result.Window{Start: time.Now()}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := o.Start(ctx, st); err != nil {
		t.Fatal(err)
	}
	if err := o.Start(ctx, st); err == nil {
		t.Error("a second Start was accepted")
	}
	until(t, ctx, "two readings", func() bool { return o.Readings() >= 2 })
	st.Window.End = time.Now()
	if err := o.Stop(ctx, st); err != nil {
		t.Fatal(err)
	}
	busy, ok := st.Series["os.cpu.busy"]
	if !ok || len(busy.T) < 2 || len(busy.T) != len(busy.V) {
		t.Fatalf("os.cpu.busy series: %+v", busy)
	}
	for i := 1; i < len(busy.T); i++ {
		if busy.T[i] <= busy.T[i-1] {
			t.Errorf("series times not increasing: %v", busy.T)
		}
	}
	if v := st.Counters["os.cpu.busy"]; v < 0 || v > 1 {
		t.Errorf("mean busy %v", v)
	}
	if st.Counters["os.mem_total_bytes"] <= 0 {
		t.Errorf("no memory figures: %v", st.Counters)
	}
	for _, d := range o.Sampler().Devices() {
		if _, ok := st.Series["disk."+d+".util"]; !ok {
			t.Errorf("no series for device %s", d)
		}
	}
	if err := o.Stop(ctx, st); err == nil {
		t.Error("Stop without Start was accepted")
	}
}

func TestWeightedMean(t *testing.T) {
	s := &result.TimeSeries{T: []float64{1, 2, 4}, V: []float64{10, 20, 40}}
	if m := weightedMean(s); m != (10+20+80)/4.0 {
		t.Errorf("weightedMean = %v", m)
	}
	if m := weightedMean(&result.TimeSeries{}); m != 0 {
		t.Errorf("empty = %v", m)
	}
}
