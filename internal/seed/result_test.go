package seed

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// A seeding's report goes into its step's seed section and comes back, through a result
// file, as the section's one type (result.Seeding) that the report reads; the JSON keeps
// the names it always had, with no wrapper for the embedded section and no series.
func TestReportStepRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	rep := &Report{Seeding: result.Seeding{Standby: "node3", Port: 5434, Method: MethodDirect, Compression: "lz4", Started: t0, Ended: t0.Add(time.Minute),
		Phases:       []PhaseUse{{Name: PhaseTransfer, Seconds: 40, SenderCPUSeconds: 3, DiskWriteBytes: 1 << 30}, {Name: PhaseCatchUp, Seconds: 2}},
		TotalSeconds: 42, StreamedBytes: 1 << 30, WireBytes: 1 << 29, CompressionRatio: 2, MBps: 26.8, Attempts: 1, HistoryID: 7},
		Series: map[string]result.TimeSeries{"seed.done_bytes": {T: []float64{1}, V: []float64{1 << 20}}}}
	st := rep.Step(2, 0, 1, "lz4", nil)
	r := &result.Result{Schema: result.SchemaVersion, Steps: []result.Step{{}, {Index: 1}, st}, Complete: true}
	dir := t.TempDir()
	if _, err := result.Write(dir, r); err != nil {
		t.Fatal(err)
	}
	back, err := result.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := back.Steps[2].Seeding()
	if err != nil || got == nil {
		t.Fatalf("seed section %v %v", got, err)
	}
	if !reflect.DeepEqual(*got, rep.Seeding) {
		t.Fatalf("read back %+v\nwritten %+v", *got, rep.Seeding)
	}
	raw := string(st.Extra[result.ExtraSeed])
	for _, want := range []string{`"standby":"node3"`, `"phases":[{"name":"transfer","seconds":40`, `"compression_ratio":2`, `"history_id":7`} {
		if !strings.Contains(raw, want) {
			t.Errorf("seed section lacks %s: %s", want, raw)
		}
	}
	if strings.Contains(raw, "Seeding") || strings.Contains(raw, "done_bytes") {
		t.Errorf("seed section holds the wrapper or the series: %s", raw)
	}
	var whole Report
	if err := json.Unmarshal(st.Extra[result.ExtraSeed], &whole); err != nil || whole.HistoryID != 7 {
		t.Fatalf("the section does not read back as a Report: %+v %v", whole, err)
	}
}

// A figure JSON cannot hold leaves the section out and says so in the step's warnings.
func TestReportStepSaysWhatItCouldNotWrite(t *testing.T) {
	rep := &Report{Seeding: result.Seeding{Method: MethodDirect, CompressionRatio: math.Inf(1)}}
	rep.Warnings = []string{"a"}
	st := rep.Step(4, 0, 0, "", nil)
	if _, ok := st.Extra[result.ExtraSeed]; ok {
		t.Fatal("a section was written")
	}
	if len(st.Warnings) != 2 || !strings.HasPrefix(st.Warnings[1], `step 4 extra "seed": json: unsupported value: +Inf`) || len(rep.Warnings) != 1 {
		t.Fatalf("step warnings %q, report's %q", st.Warnings, rep.Warnings)
	}
}
