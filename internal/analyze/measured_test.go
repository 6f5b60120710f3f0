package analyze

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
)

func TestNothingMeasuredRun(t *testing.T) {
	// tpcc run --keying over a window too short to finish a transaction: the runner cut
	// the step short with no successful operation.
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st := result.Step{VUs: 4, Window: result.Window{Start: t0, End: t0.Add(2 * time.Second)},
		Ops: map[string]*result.Op{"new_order": {}}, IncompleteReason: "no successful operation in the window (0 failed)"}
	r := &result.Result{Meta: result.Meta{Command: "tpcc run", Config: map[string]any{"keying": true}}, Steps: []result.Step{st}}
	run := mustFromResult(t, r, Options{LoadName: "VUs", Unit: "tx/s"})
	a := run.Variants[0].Result
	if a.Knee.Characteristic != nil || a.Knee.Saturation != nil || a.Knee.Peak != nil || a.USL != nil || len(a.Little) != 0 {
		t.Errorf("a knee drawn from nothing: %+v", a.Knee)
	}
	fired := Fired(a.Verdicts)
	if len(fired) == 0 || fired[0].Code != VNothingMeasured || !strings.Contains(fired[0].Message, "0 successful operations at 4 VUs in 2.00 s: the run measured nothing") {
		t.Fatalf("verdicts %+v", a.Verdicts)
	}
	for _, v := range fired {
		if v.Code == VLittle {
			t.Errorf("Little's law judged on nothing: %+v", v)
		}
	}
	var b bytes.Buffer
	if err := a.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, w := range []string{"knee: not drawn: no step measured a successful operation", "saturated: Not judged", "! nothing-measured:"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "peak 0") || strings.Contains(out, "· saturation") {
		t.Errorf("a saturation point of nothing:\n%s", out)
	}
}

func TestNothingMeasuredStepLeftOut(t *testing.T) {
	sweep := mmcSweep([]int{1, 2, 4, 8}, 2, 1000, 0)
	steps := resultOf(t, sweep, "", func(Step) map[string]float64 { return nil })
	steps[3].Ops["query"].Count, steps[3].Ops["query"].Errors = 0, 1001 // every operation failed at 8
	steps[3].Complete = false
	steps[3].Errors = []result.ErrorClass{{SQLState: "22012", Count: 1001}}
	run := mustFromResult(t, &result.Result{Steps: steps}, Options{})
	a := run.Variants[0].Result
	if a.Knee.Peak == nil || a.Knee.Peak.Load == 8 || a.Knee.Characteristic.Load != 1 {
		t.Errorf("knee from the empty step: %+v", a.Knee)
	}
	var codes []string
	for _, v := range Fired(a.Verdicts) {
		codes = append(codes, v.Code)
		if v.Code == VNothingMeasured && !strings.Contains(v.Message, "0 successful operations at 8 VUs (1001 failed, SQLSTATE 22012×1001)") {
			t.Errorf("message %q", v.Message)
		}
	}
	if !strings.Contains(strings.Join(codes, " "), VNothingMeasured) || !strings.Contains(strings.Join(codes, " "), VErrors) {
		t.Errorf("verdicts %v: want nothing-measured and errors", codes)
	}
}

func TestNothingMeasuredNotForStepsWithoutOperations(t *testing.T) {
	// seed's phases count rows and bytes, not operations: not "nothing measured".
	seed := []*result.Step{{VUs: 1, Complete: true, Ops: map[string]*result.Op{}, Counters: map[string]float64{"mb_per_s": 50}}}
	if MeasuredNothing(seed) {
		t.Error("a step of no operations called empty")
	}
	if !MeasuredNothing([]*result.Step{{VUs: 1, Complete: true, Ops: map[string]*result.Op{"q": {Errors: 3}}}}) {
		t.Error("a step of failures not called empty")
	}
}

func TestSteadinessNotJudgedBelowMinSamples(t *testing.T) {
	short := []Step{{Load: 1, PerSecond: []float64{100, 50, 200}}, {Load: 2, PerSecond: []float64{100}}}
	vs := steadiness(short, "threads")
	if len(vs) != 1 || !vs[0].NotJudged || vs[0].Code != VNotSteady ||
		vs[0].Message != "not judged: 3 per-second samples at 1 thread, 5 needed (and too few at 1 more of 2 steps)" {
		t.Errorf("short windows: %+v", vs)
	}
	if len(Fired(vs)) != 0 {
		t.Error("not judged counted as fired")
	}
	rising := Step{Load: 4, PerSecond: []float64{100, 120, 140, 160, 180, 200}}
	vs = steadiness(append(short, rising), "threads")
	if len(vs) != 1 || vs[0].NotJudged || !strings.Contains(vs[0].Message, "throughput at 4 threads was not steady: it trended") {
		t.Errorf("rising: %+v", vs)
	}
	steady := Step{Load: 4, PerSecond: []float64{100, 101, 99, 100, 100, 102}}
	if vs := steadiness([]Step{steady}, "threads"); len(vs) != 0 {
		t.Errorf("steady: %+v", vs)
	}
}

func TestUnsampledRunSaysWhatItCouldNotJudge(t *testing.T) {
	// --sample=false: the load generator's own figures only.
	steps := resultOf(t, mmcSweep([]int{1, 2, 4}, 2, 1000, 0), "", func(Step) map[string]float64 { return nil })
	run := mustFromResult(t, &result.Result{Steps: steps}, Options{})
	a := run.Variants[0].Result
	var notJudged []Verdict
	for _, v := range a.Verdicts {
		if v.NotJudged {
			notJudged = append(notJudged, v)
		}
	}
	if len(notJudged) != 1 || notJudged[0].Code != VSamplers || !strings.Contains(notJudged[0].Message, "no sampler ran") {
		t.Errorf("not judged: %+v", notJudged)
	}
	if !strings.HasPrefix(a.Saturated.Sentence, "Not judged: no sampler ran") {
		t.Errorf("saturation sentence %q", a.Saturated.Sentence)
	}
	// An OS sampler without a database sampler (a listener alone): the sentence names the
	// waits as not measured, never "0%" of them.
	for i := range steps {
		steps[i].Counters = map[string]float64{result.OSCPUBusy: 0.3, result.OSCPUSteal: 0}
	}
	run = mustFromResult(t, &result.Result{Steps: steps}, Options{})
	a = run.Variants[0].Result
	if s := a.Saturated.Sentence; !strings.Contains(s, "the sessions' waits not measured (no database sampler ran)") {
		t.Errorf("saturation sentence without waits: %q", s)
	}
	for _, v := range a.Verdicts {
		if v.Code == VSamplers {
			t.Errorf("the OS sampler ran, yet %+v", v)
		}
	}
	for i := range steps { // a pinned CPU: the sentence blames it and names the absent waits
		steps[i].Counters[result.OSCPUBusy] = 0.97
	}
	run = mustFromResult(t, &result.Result{Steps: steps}, Options{})
	if s := run.Variants[0].Result.Saturated.Sentence; !strings.Contains(s, "the CPU saturated") || !strings.Contains(s, "the sessions' waits not measured") {
		t.Errorf("pinned CPU without waits: %q", s)
	}
}
