package readahead

import (
	"os"
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/agerr"
)

func TestScheduleInterleavesAndAlternates(t *testing.T) {
	qs := Queries(100, 10)
	runs := Schedule(qs, 3)
	if len(runs) != 3*len(qs)*2 {
		t.Fatalf("%d runs, want %d", len(runs), 3*len(qs)*2)
	}
	firstOn := map[string]int{}
	for i := 0; i < len(runs); i += 2 {
		a, b := runs[i], runs[i+1]
		if a.Query.Name != b.Query.Name || a.Repeat != b.Repeat || a.Prefetch == b.Prefetch {
			t.Fatalf("runs %d,%d are not one query off and on back to back: %+v %+v", i, i+1, a, b)
		}
		if a.Prefetch {
			firstOn[a.Query.Name]++
		}
	}
	// Over 3 repeats each query starts with "on" once or twice, never always or never.
	for _, q := range qs {
		if n := firstOn[q.Name]; n == 0 || n == 3 {
			t.Errorf("%s: prefetch on ran first in %d of 3 repeats", q.Name, n)
		}
	}
}

func TestConfigValidateReportsEveryProblem(t *testing.T) {
	c := Config{Rows: 10, RangeIDs: 20, JoinIDs: -1, Repeat: 0, Queries: []string{"full", "nope"}, Device: "disk",
		ReadAheadKB: -1, IOConcurrency: 5000, ThrottleIOPS: -3}
	err := c.Validate()
	if !agerr.IsBadInput(err) {
		t.Fatalf("want bad input, got %v", err)
	}
	for _, flag := range []string{"--rows", "--range-ids", "--join-ids", "--repeat", "--queries", "--device", "--read-ahead-kb", "--io-concurrency", "--throttle-iops"} {
		if !strings.Contains(err.Error(), flag) {
			t.Errorf("error does not name %s: %v", flag, err)
		}
	}
	if err := (Config{}).WithDefaults().Validate(); err != nil {
		t.Errorf("defaults invalid: %v", err)
	}
	if err := (Config{Rows: 2000}).WithDefaults().Validate(); err != nil {
		t.Errorf("small table with default bounds: %v", err)
	}
	if err := (Config{ThrottleIOPS: 100, Device: DeviceNone}).WithDefaults().Validate(); err == nil {
		t.Errorf("--throttle-iops with --device none accepted")
	}
}

func TestParseExplainPG15AndPG18(t *testing.T) {
	for _, f := range []string{"testdata/explain-pg15.json", "testdata/explain-pg18.json"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := ParseExplain(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if p.SharedRead == 0 || p.SharedHit == 0 || p.IOReadMs <= 0 || p.ExecutionMs <= 0 || p.Rows == 0 {
			t.Errorf("%s: figures missing: %+v", f, p)
		}
		if !p.HasNode("Nested Loop") || !p.HasNode("Index Scan") || p.HasNode("Seq Scan") {
			t.Errorf("%s: nodes %v", f, p.Nodes)
		}
	}
	for _, bad := range []string{"", "{}", "[]", `[{"Plan": null}]`, "[1]"} {
		if _, err := ParseExplain([]byte(bad)); err == nil {
			t.Errorf("ParseExplain(%q) accepted", bad)
		}
	}
}

func TestSummarizeMediansAndRatio(t *testing.T) {
	qs := Queries(100, 10)[1:2] // full
	var ms []Measurement
	for i, el := range []float64{900, 1000, 5000} {
		ms = append(ms, Measurement{Query: "full", Prefetch: false, Repeat: i, ElapsedMs: el, Cold: true, NodeOK: true,
			Plan: PlanStats{SharedRead: 100}, IOOps: 100, IOBytes: 100 * 8192})
		ms = append(ms, Measurement{Query: "full", Prefetch: true, Repeat: i, ElapsedMs: el / 10, Cold: i != 2, NodeOK: true,
			Plan: PlanStats{SharedRead: 100}, IOOps: 8, IOBytes: 100 * 8192})
	}
	rows := Summarize(qs, ms)
	if len(rows) != 1 {
		t.Fatalf("%d rows", len(rows))
	}
	r := rows[0]
	if r.Off.ElapsedMs != 1000 || r.On.ElapsedMs != 100 || r.Ratio != 10 || r.On.Cold != 2 || r.Off.AvgIOKB != 8 || r.On.AvgIOKB != 100 {
		t.Errorf("row %+v", r)
	}
	s, err := ms[0].Step(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if s.Variant != "prefetch=off" || s.Ops["query"].Latency.P50 < 899_000 || s.Counters["buffer_reads"] != 100 {
		t.Errorf("step %+v", s)
	}
}

func FuzzParseExplain(f *testing.F) {
	for _, p := range []string{"testdata/explain-pg15.json", "testdata/explain-pg18.json"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`[{"Plan": {"Node Type": "Seq Scan", "Plans": [{"Plans": []}]}}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseExplain(b)
		if err == nil && len(p.Nodes) == 0 {
			t.Fatalf("a parsed plan with no nodes: %q", b)
		}
	})
}
