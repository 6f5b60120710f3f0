package merge

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/result"
)

// segmentResult is the result segment i of of would write for a step of the given
// latencies (µs), beginning at start.
func segmentResult(t testing.TB, i, of int, start time.Time, lat []int64) *result.Result {
	t.Helper()
	h := hdrhistogram.New(1, 60_000_000, 3)
	for _, v := range lat {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	hist, err := result.NewHist(h)
	if err != nil {
		t.Fatal(err)
	}
	r := result.New("stress", "test", []string{"stress", "--threads", "3", "--segment", "x", "--results", "r" + string(rune('0'+i))})
	r.Meta.Config = map[string]any{"threads": "3", "rate": 0.0}
	r.Meta.Segment = &result.Segment{Index: i, Of: of, Run: "run-1",
		Starts: []result.SegmentStart{{Step: 0, At: start, Began: start.Add(time.Duration(i) * time.Millisecond)}}}
	tp := result.TimeSeries{Unit: "ops/s", Start: start.Add(time.Duration(i) * 3 * time.Millisecond)}
	for s := 1; s <= 3; s++ {
		tp.T = append(tp.T, float64(s)+0.001*float64(i))
		tp.V = append(tp.V, float64(10*(i+1)))
	}
	r.Steps = []result.Step{{Index: 0, Params: map[string]string{"threads": "3"}, VUs: 1, Complete: true,
		Window:     result.Window{Start: start, End: start.Add(3 * time.Second)},
		Ops:        map[string]*result.Op{"query": {Count: int64(len(lat)), Rows: int64(len(lat)), Latency: hist}},
		Throughput: map[string]result.TimeSeries{"*": tp}, Counters: map[string]float64{result.BufferHits: 100 + float64(i)},
		Sessions: []result.Sessions{{Node: "primary", Count: 1}}}}
	r.Complete = true
	return r
}

// segments makes of segments' results of random latencies and returns them with the union
// of their latencies in one histogram.
func segments(t testing.TB, of int) ([]Input, *hdrhistogram.Histogram) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	union := hdrhistogram.New(1, 60_000_000, 3)
	start := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	var in []Input
	for i := 0; i < of; i++ {
		lat := make([]int64, 1000+500*i)
		for k := range lat {
			lat[k] = 100 + rng.Int64N(int64(5000*(i+1)))
			_ = union.RecordValue(lat[k])
		}
		in = append(in, Input{Path: "seg" + string(rune('0'+i)), Result: segmentResult(t, i, of, start, lat)})
	}
	return in, union
}

func TestMergeIsExact(t *testing.T) {
	t.Parallel()
	in, union := segments(t, 3)
	m, err := Merge([]Input{in[2], in[0], in[1]})
	if err != nil {
		t.Fatal(err)
	}
	q := m.Steps[0].Ops["query"]
	if q.Count != 1000+1500+2000 || q.Latency.Count != union.TotalCount() || q.Rows != q.Count {
		t.Fatalf("merged count %d (hist %d), want %d", q.Count, q.Latency.Count, union.TotalCount())
	}
	if q.Latency.P99 != union.ValueAtQuantile(99) || q.Latency.Max != union.Max() || q.Latency.P50 != union.ValueAtQuantile(50) {
		t.Fatalf("merged p99 %d max %d, union's %d %d", q.Latency.P99, q.Latency.Max, union.ValueAtQuantile(99), union.Max())
	}
	st := m.Steps[0]
	if !m.Complete || !st.Complete || st.VUs != 3 || m.Meta.Segment != nil || m.Meta.Merged.Of != 3 || len(m.Meta.Merged.Segments) != 3 {
		t.Fatalf("merged run complete %v step %+v meta %+v", m.Complete, st, m.Meta.Merged)
	}
	if tp := st.Throughput["*"]; len(tp.T) != 3 || tp.V[0] != 60 || tp.T[2] != 3 {
		t.Fatalf("throughput not aligned by time: %+v", tp)
	}
	if st.Counters[result.BufferHits] != 100 || len(st.Sessions) != 1 || st.Sessions[0].Count != 3 {
		t.Fatalf("servers' counters %v (want the lowest segment's), sessions %+v", st.Counters, st.Sessions)
	}
	if got := strings.Join(m.Meta.Args, " "); got != "stress --threads 3" {
		t.Fatalf("merged args %q", got)
	}
	if sp := m.Meta.Merged.StartSpread()[0]; sp != 0.002 {
		t.Fatalf("start spread %v, want 0.002", sp)
	}
}

func TestMergeIncomplete(t *testing.T) {
	t.Parallel()
	in, _ := segments(t, 3)
	m, err := Merge(in[:2])
	if err != nil {
		t.Fatal(err)
	}
	if m.Complete || !strings.Contains(m.IncompleteReason, "segment(s) 2 of 3 missing") || m.Steps[0].Complete {
		t.Fatalf("a merge without segment 2: complete %v (%q)", m.Complete, m.IncompleteReason)
	}
	in[1].Result.Complete, in[1].Result.IncompleteReason = false, "killed"
	in[1].Result.Steps = nil
	m, err = Merge(in)
	if err != nil {
		t.Fatal(err)
	}
	if m.Complete || !strings.Contains(m.IncompleteReason, "segment 1 did not complete: killed") ||
		!strings.Contains(m.Steps[0].IncompleteReason, "segment(s) 1 did not run this step") {
		t.Fatalf("a merge with a failed segment: %q / %q", m.IncompleteReason, m.Steps[0].IncompleteReason)
	}
}

func TestMergeBadInput(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		change func(in []Input)
		want   string
	}{
		"twice":    {func(in []Input) { in[2] = in[1] }, "segment 1 given twice: seg1 and seg1"},
		"range":    {func(in []Input) { in[2].Result.Meta.Segment.Index = 3 }, "seg2: segment 3/3: index 3 out of range"},
		"settings": {func(in []Input) { in[1].Result.Meta.Config["threads"] = "4" }, "seg0 and seg1 are not segments of one run: setting threads 3 and 4"},
		// Their run names, made from their command lines, differ too: the setting is named.
		"settings, named run": {func(in []Input) {
			in[1].Result.Meta.Config["threads"], in[1].Result.Meta.Segment.Run = "4", "args-other"
		},
			"seg0 and seg1 are not segments of one run: setting threads 3 and 4"},
		"command":   {func(in []Input) { in[1].Result.Meta.Command = "scan" }, "command \"stress\" and \"scan\""},
		"of":        {func(in []Input) { in[2].Result.Meta.Segment.Of = 4 }, "3 and 4 segments"},
		"run":       {func(in []Input) { in[1].Result.Meta.Segment.Run = "other" }, "run \"run-1\" and \"other\""},
		"args":      {func(in []Input) { in[1].Result.Meta.Args = append(in[1].Result.Meta.Args, "--rate", "5") }, "command line"},
		"unsegment": {func(in []Input) { in[0].Result.Meta.Segment = nil }, "seg0: not a segment's result"},
		"steps": {func(in []Input) { in[1].Result.Steps[0].Params = map[string]string{"threads": "6"} },
			"step 1: segment 0 ran threads=3, segment 1 threads=6"},
	} {
		in, _ := segments(t, 3)
		c.change(in)
		_, err := Merge(in)
		if !agerr.IsBadInput(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want bad input naming %q", name, err, c.want)
		}
	}
}

// FuzzMerge feeds a segment's result file of any bytes to the merge beside a good one: it
// is refused as bad input or merged, never a panic.
func FuzzMerge(f *testing.F) {
	in, _ := segments(f, 2)
	good, _ := json.Marshal(in[1].Result)
	f.Add(good)
	f.Add([]byte(`{"schema":1,"meta":{"command":"stress","segment":{"index":7,"of":2}}}`))
	f.Add([]byte(`{"schema":1,"meta":{"command":"stress","segment":{"index":1,"of":2,"run":"run-1"}},"steps":[{"ops":{"q":{"latency":{"hdr":"x"}}}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := result.Decode(b)
		if err != nil {
			return
		}
		in, _ := segments(t, 2)
		m, err := Merge([]Input{in[0], {Path: "fuzz", Result: r}})
		if err != nil {
			if !agerr.IsBadInput(err) {
				t.Fatalf("not bad input: %v", err)
			}
			return
		}
		if m.Meta.Merged == nil || len(m.Meta.Merged.Segments) != 2 {
			t.Fatalf("merged %+v", m.Meta.Merged)
		}
	})
}

// TestIncompleteMergeLabelsWholeLoad checks that a merge lacking a segment labels each step
// with the load the whole run ran (its threads), not the sum of the segments it holds.
func TestIncompleteMergeLabelsWholeLoad(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	var in []Input
	for _, i := range []int{0, 2} {
		r := segmentResult(t, i, 3, start, []int64{100, 200})
		// Steps of 3 and 6 threads: each segment ran 1 and 2 of them.
		second := r.Steps[0]
		second.Index, second.Params, second.VUs = 1, map[string]string{"threads": "6"}, 2
		second.Ops = map[string]*result.Op{"query": {Count: 2, Latency: r.Steps[0].Ops["query"].Latency}}
		r.Steps = append(r.Steps, second)
		in = append(in, Input{Path: "r" + string(rune('0'+i)), Result: r})
	}
	m, err := Merge(in)
	if err != nil {
		t.Fatal(err)
	}
	if m.Complete || m.Steps[0].VUs != 3 || m.Steps[1].VUs != 6 {
		t.Fatalf("merge of segments 0 and 2 of 3: complete %v, steps of %d and %d VUs; want 3 and 6 (the whole run's)",
			m.Complete, m.Steps[0].VUs, m.Steps[1].VUs)
	}
}
