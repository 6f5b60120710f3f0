package analyze

import (
	"slices"
	"strings"
	"testing"
)

// A step cut by a fault is judged for its fault (incomplete names it) and by no other rule
// of its figures: at 32 VUs of a clean sweep, a step whose throughput and latency break
// Little's law, whose waits say locks, and whose CPU is saturated is left out of the knee,
// the saturation and Little's law, which judge the other steps as before.
func TestIncompleteStepJudgedForItsFault(t *testing.T) {
	steps, ev, f := goodRun()
	last := len(steps) - 1
	steps[last].Incomplete = "cut by a fault: 32 session(s) lost, 0 made again, 32 still lost at the window's end (200.0 s without a session)"
	steps[last].Throughput /= 10 // time without sessions: Little's law fails by a factor of 10
	ev[last].Waits = Waits{Lock: 30}
	ev[last].CPUBusy = 1
	a := Analyze(Input{LoadName: "VUs", Unit: "ops/s", Steps: steps, Evidence: ev, Facts: f})
	if got := codes(a.Verdicts); !slices.Equal(got, []string{VIncomplete}) {
		t.Fatalf("verdicts %v, want only %s: %+v", got, VIncomplete, a.Verdicts)
	}
	if msg := a.Verdicts[0].Message; !strings.Contains(msg, "at 32 VUs is incomplete, cut by a fault: 32 session(s) lost") {
		t.Errorf("the verdict does not name the fault: %s", msg)
	}
	for _, l := range a.Little {
		if l.Load == 32 {
			t.Errorf("Little's law judged at the step cut by a fault: %+v", l)
		}
	}
	if a.Knee.Peak == nil || a.Knee.Peak.Load == 32 || strings.Contains(a.Saturated.Sentence, "lock") {
		t.Errorf("knee %+v, saturated %q: drawn from the step cut by a fault", a.Knee.Peak, a.Saturated.Sentence)
	}

	// With no complete step, nothing saturated is judged, and the sentence says why.
	one := steps[last:]
	a = Analyze(Input{LoadName: "VUs", Unit: "ops/s", Steps: one, Evidence: ev[last:], Facts: f})
	if !strings.HasPrefix(a.Saturated.Sentence, "Not judged: the step at 32 VUs was cut by a fault: 32 session(s) lost") ||
		a.Knee.Characteristic != nil {
		t.Errorf("saturated %q, knee %+v: want not judged, for the fault", a.Saturated.Sentence, a.Knee)
	}
	var b strings.Builder
	if err := a.WriteText(&b); err != nil || !strings.Contains(b.String(), "knee: not drawn: no step that measured operations completed") {
		t.Errorf("text %q, %v", b.String(), err)
	}
}
