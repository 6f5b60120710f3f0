package analyze

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/agbench/agbench/internal/result"
)

// resultOf builds a result from a synthetic sweep as the runner and samplers would write
// it: one step per load and repeat, a latency histogram around each step's mean, per-second
// throughput, and sampler counters under their real names.
func resultOf(t *testing.T, steps []Step, variant string, counters func(Step) map[string]float64) []result.Step {
	t.Helper()
	var out []result.Step
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, s := range steps {
		h := hdrhistogram.New(1, 60_000_000, 3)
		us := int64(s.MeanMs * 1000)
		for j := 0; j < 1000; j++ {
			h.RecordValue(max(1, us*int64(50+j%101)/100)) // mean = us, spread ±50%
		}
		hist, err := result.NewHist(h)
		if err != nil {
			t.Fatal(err)
		}
		window := 300.0
		st := result.Step{Index: len(out), Point: i, Variant: variant, VUs: int(s.Load),
			Window: result.Window{Start: t0, End: t0.Add(time.Duration(window * float64(time.Second)))},
			Ops:    map[string]*result.Op{"query": {Count: int64(s.Throughput * window), Latency: hist}},
			Client: result.ClientCPU{UserSeconds: 3, SystemSeconds: 3, Utilisation: 0.01},
			Throughput: map[string]result.TimeSeries{"*": {T: []float64{1, 2, 3, 4, 5, 6}, V: []float64{
				s.Throughput * 0.99, s.Throughput * 1.01, s.Throughput, s.Throughput * 0.98, s.Throughput * 1.02, s.Throughput}}},
			Counters: counters(s)}
		out = append(out, st)
	}
	return out
}

func TestFromResult(t *testing.T) {
	sweep := mmcSweep([]int{1, 2, 4, 8, 16, 32}, 8, 1000, 0)
	counters := func(s Step) map[string]float64 {
		c := map[string]float64{
			"os.cpu.busy": 0.3, "os.cpu.steal": 0.0, "os.mem_available_bytes": 8 << 30,
			"disk.vda.iops": 100, "disk.vda.util": 0.2, "disk.vda.await_ms": 0.4, "disk.vda.queue": 0.5,
			"disk.loop0.iops": 0, "disk.loop0.util": 0,
			"pg.node1.database_bytes": 200 << 20, "pg.node1.shared_buffers_bytes": 128 << 20,
			"pg.node1.wait.cpu": s.Load * 0.2, "pg.node1.wait.log": 0, "pg.node2.wait.cpu": 0.1,
			"pg.node1.standby.node2.replay_lag_s": 0.01, "pg.node1.standby.node2.replay_lag_growth": 0,
		}
		if s.Load >= 8 {
			c["pg.node1.wait.log"] = s.Load * 0.7
			c["disk.vda.await_ms"] = 3
		}
		return c
	}
	r := &result.Result{Meta: result.Meta{Command: "stress"}, Steps: resultOf(t, sweep, "", counters)}
	for i := range r.Steps {
		r.Steps[i].Extra = map[string]json.RawMessage{"sample": json.RawMessage(`{"nodes": {
			"node1": {"top_waits": [{"type": "IO", "event": "WALWrite", "class": "log", "sessions": 3}, {"type": "IO", "event": "WALSync", "class": "log", "sessions": 2}]},
			"node2": {"top_waits": [{"type": "IO", "event": "WALSync", "class": "log", "sessions": 2}]}}}`)}
	}
	run, err := Attach(r, Options{LoadName: "clients", Unit: "q/s"})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Variants) != 1 {
		t.Fatalf("%d variants", len(run.Variants))
	}
	a := run.Variants[0].Result
	if a.Knee.Knee == nil || a.Knee.Knee.Load != 8 {
		t.Errorf("knee %+v, want 8", a.Knee.Knee)
	}
	if m := a.Knee.Characteristic.MeanMs; m < 0.95 || m > 1.05 {
		t.Errorf("characteristic latency %v ms from the histogram, want 1", m)
	}
	if a.Saturated.Resource != ResLog || !strings.Contains(a.Saturated.Sentence, "device vda") ||
		!strings.Contains(a.Saturated.Sentence, "(mostly IO:WALSync)") {
		t.Errorf("saturation: %+v", a.Saturated)
	}
	ev := run.Variants[0].Input.Evidence
	if math.Abs(ev[0].Waits.CPU-0.3) > 1e-9 || ev[0].Device.Name != "vda" || ev[0].Standby != "node2" || ev[0].LoadGenCores != 6.0/300 {
		t.Errorf("evidence: %+v", ev[0])
	}
	if f := run.Variants[0].Input.Facts; f.DatasetBytes != 200<<20 || f.SharedBuffersBytes != 128<<20 || f.PageCacheBytes != 8<<30 || f.Storage {
		t.Errorf("facts: %+v", f)
	}
	codes := codes(a.Verdicts)
	if len(codes) != 1 || codes[0] != VFitsInMemory {
		t.Errorf("verdicts %v, want only fits-in-memory (200 MiB database, 8 GiB free)", codes)
	}
	var stored Run
	if err := json.Unmarshal(r.Analysis, &stored); err != nil || len(stored.Variants) != 1 {
		t.Errorf("stored analysis: %v %+v", err, stored)
	}
	var b bytes.Buffer
	if err := run.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"analysis\n", "knee: characteristic latency", "knee 8 clients", "saturated: At 8 clients and beyond, log saturated", "! fits-in-memory"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, b.String())
		}
	}
}

func TestFromResultVariantsAndRepeats(t *testing.T) {
	sweep := mmcSweep([]int{1, 2, 4, 8}, 4, 1000, 0)
	faster := mmcSweep([]int{1, 2, 4, 8}, 8, 1000, 0) // twice the servers: same at 1..4, double at 8
	none := func(Step) map[string]float64 { return nil }
	var steps []result.Step
	for rep := 0; rep < 2; rep++ {
		for _, st := range resultOf(t, sweep, "routing=off", none) {
			st.Repeat = rep
			steps = append(steps, st)
		}
		for _, st := range resultOf(t, faster, "routing=on", none) {
			st.Repeat = rep
			steps = append(steps, st)
		}
	}
	run := mustFromResult(t, &result.Result{Steps: steps}, Options{})
	if len(run.Variants) != 2 || run.Variants[0].Variant != "routing=off" {
		t.Fatalf("variants: %+v", run.Variants)
	}
	in := run.Variants[0].Input
	if len(in.Steps) != 4 || len(in.Steps[0].Repeats) != 2 {
		t.Errorf("repeats not merged: %+v", in.Steps)
	}
	if len(run.Comparisons) != 3 || len(run.Differences) != 1 || !strings.Contains(run.Differences[0], "at 8 VUs: routing=on ahead, 2.00×") {
		t.Errorf("comparisons %v, differences %v", run.Comparisons, run.Differences)
	}
	for _, c := range run.Comparisons {
		if c.Code != VNoDifference {
			t.Errorf("comparison %+v", c)
		}
	}
}

func TestFromResultStorageAndKeying(t *testing.T) {
	sweep := mmcSweep([]int{1, 2, 4}, 2, 1000, 0)
	disk := func(s Step) map[string]float64 {
		return map[string]float64{"device_iops": s.Throughput, "device_mb_per_s": s.Throughput * 0.128, "mb_per_s": s.Throughput * 0.128,
			"device_util": 0.5, "device_read_await_ms": 0.3, "machine_cpu_user": 0.1, "machine_cpu_system": 0.1, "machine_cpu_steal": 0.2}
	}
	r := &result.Result{Meta: result.Meta{Command: "disk", Config: map[string]any{"workload": map[string]any{"direct": false}}},
		Steps: resultOf(t, sweep, "", disk)}
	a := mustFromResult(t, r, Options{LoadName: "outstanding IOs"}).Variants[0]
	if !a.Input.Facts.Storage || a.Input.Facts.DirectIO {
		t.Errorf("facts %+v", a.Input.Facts)
	}
	got := codes(a.Result.Verdicts)
	if strings.Join(got, ",") != VPageCache+","+VSteal {
		t.Errorf("verdicts %v, want page-cache and steal", got)
	}
	if e := a.Input.Evidence[0]; e.CPUBusy != 0.2 || e.Device.Util != 0.5 {
		t.Errorf("disk evidence %+v", e)
	}
	// The device is named as the disk tester names it (Extra["disk"].device), never "device device".
	for dev, want := range map[string]string{"vdb": "device vdb 50% busy", "": "device under test 50% busy"} {
		r.Extra = map[string]json.RawMessage{"disk": json.RawMessage(`{"device":"` + dev + `"}`)}
		var b bytes.Buffer
		if err := mustFromResult(t, r, Options{LoadName: "outstanding IOs"}).WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), want) || strings.Contains(b.String(), "device device") {
			t.Errorf("device %q: want %q in\n%s", dev, want, b.String())
		}
	}

	keyed := resultOf(t, sweep, "", func(Step) map[string]float64 { return nil })
	for i := range keyed {
		keyed[i].Ops["query"].Count /= 10 // users spent 90% of the time keying and thinking
	}
	r = &result.Result{Meta: result.Meta{Config: map[string]any{"keying": true}}, Steps: keyed}
	if got := codes(mustFromResult(t, r, Options{}).Variants[0].Result.Verdicts); len(got) != 0 {
		t.Errorf("keying run judged by Little's law: %v", got)
	}
	r.Meta.Config["keying"] = false
	if got := codes(mustFromResult(t, r, Options{}).Variants[0].Result.Verdicts); len(got) != 1 || got[0] != VLittle {
		t.Errorf("verdicts %v, want Little's law", got)
	}
}

func TestFromResultReadIntent(t *testing.T) {
	sweep := mmcSweep([]int{1, 2}, 2, 1000, 0)
	var steps []result.Step
	for _, variant := range []string{"routing=off", "routing=on"} {
		for _, st := range resultOf(t, sweep, variant, func(Step) map[string]float64 {
			return map[string]float64{"read_tx_on_standby": 0, "read_tx_on_primary": 40}
		}) {
			st.Params = map[string]string{"routing": strings.TrimPrefix(variant, "routing=")}
			if st.Params["routing"] == "on" {
				st.Counters["read_tx_on_standby"], st.Counters["read_tx_on_primary"] = 38, 2
			}
			steps = append(steps, st)
		}
	}
	r := &result.Result{Meta: result.Meta{Config: map[string]any{"read_intent": true}}, Steps: steps}
	run := mustFromResult(t, r, Options{})
	if got := codes(run.Variants[0].Result.Verdicts); len(got) != 0 {
		t.Errorf("routing off (read intent on the primary by design): %v", got)
	}
	vs := Fired(run.Variants[1].Result.Verdicts)
	if len(vs) != 1 || vs[0].Code != VReadIntent || !strings.Contains(vs[0].Message, "4 of 80") {
		t.Errorf("routing on, 4 of 80 read transactions on the primary: %v", vs)
	}
	r.Meta.Config["read_intent"] = false
	if got := codes(mustFromResult(t, r, Options{}).Variants[1].Result.Verdicts); len(got) != 0 {
		t.Errorf("no read intent declared: %v", got)
	}
}

// A seeding step keeps the OS sampler's figures as series only (internal/seed's meter):
// the evidence takes their window means, so the sentence does not say "CPU 0% busy".
func TestFromResultSeriesOnlyEvidence(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	series := func(vs ...float64) result.TimeSeries {
		ts := result.TimeSeries{Unit: "share", Start: t0}
		for i, v := range vs {
			ts.T = append(ts.T, float64(i+1))
			ts.V = append(ts.V, v)
		}
		return ts
	}
	st := result.Step{VUs: 1, Window: result.Window{Start: t0, End: t0.Add(4 * time.Second)}, Ops: map[string]*result.Op{},
		Counters: map[string]float64{"total_seconds": 4, "mb_per_s": 50, "compression_ratio": 1},
		Series: map[string]result.TimeSeries{
			"os.cpu.busy":  series(0.6, 0.8, 0.7, 0.7, 0.99), // the last point lies after the window
			"os.cpu.steal": series(0, 0, 0, 0), "disk.vdb.util": series(0.5, 0.5, 0.5, 0.5),
			"disk.vdb.read_mbps": series(40, 40, 40, 40), "disk.loop1.util": series(0, 0, 0, 0),
			"seed.sender_cpu_cores": series(1, 1, 1, 1),
		}}
	r := &result.Result{Meta: result.Meta{Command: "seed"}, Steps: []result.Step{st}}
	run := mustFromResult(t, r, Options{LoadName: "seedings"})
	e := run.Variants[0].Input.Evidence[0]
	if math.Abs(e.CPUBusy-0.7) > 1e-9 || e.Device.Name != "vdb" || e.Device.Util != 0.5 || e.Device.ReadMBps != 40 {
		t.Errorf("evidence from series: %+v", e)
	}
	if _, ok := r.Steps[0].Counters["os.cpu.busy"]; ok {
		t.Errorf("the step's counters were changed")
	}
	if s := run.Variants[0].Result.Saturated.Sentence; !strings.Contains(s, "CPU 70% busy") || !strings.Contains(s, "device vdb 50% busy") {
		t.Errorf("sentence: %s", s)
	}
}

// mustFromResult analyses r, failing the test on an error.
func mustFromResult(t testing.TB, r *result.Result, o Options) *Run {
	t.Helper()
	run, err := FromResult(r, o)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// A section the analysis reads that does not decode is an error naming it: never an
// analysis with that evidence quietly missing, and nothing is stored.
func TestFromResultNamesWhatItCannotRead(t *testing.T) {
	steps := func() []result.Step {
		return resultOf(t, mmcSweep([]int{1, 2, 4}, 8, 1000, 0), "", func(Step) map[string]float64 { return nil })
	}
	for _, c := range []struct {
		name  string
		spoil func(*result.Result)
		want  string
	}{
		{"sample", func(r *result.Result) {
			r.Steps[2].Extra = map[string]json.RawMessage{result.ExtraSample: json.RawMessage(`{"nodes": {"n1": {"top_waits": {"type": "Lock"}}}}`)}
		}, `step 2 extra "sample": json: cannot unmarshal object`},
		{"disk", func(r *result.Result) {
			r.Extra = map[string]json.RawMessage{result.ExtraDisk: json.RawMessage(`{"device": ["vdb"]}`)}
		}, `extra "disk": json: cannot unmarshal array`},
		{"workload", func(r *result.Result) {
			r.Meta.Command, r.Meta.Config = "disk", map[string]any{"workload": map[string]any{"direct": "yes"}}
		}, `meta config "workload": json: cannot unmarshal string`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &result.Result{Meta: result.Meta{Command: "stress"}, Steps: steps()}
			c.spoil(r)
			if run, err := FromResult(r, Options{}); err == nil || !strings.HasPrefix(err.Error(), c.want) || run != nil {
				t.Fatalf("FromResult: %v, %v; want %s...", run, err, c.want)
			}
			if _, err := Attach(r, Options{}); err == nil || !strings.HasPrefix(err.Error(), "analysis: "+c.want) || r.Analysis != nil {
				t.Fatalf("Attach: %v, stored %s", err, r.Analysis)
			}
		})
	}
}
