package analyze

import (
	"fmt"
	"strings"

	"github.com/agbench/agbench/internal/result"
)

// VIncomplete is the verdict on steps that did not complete: cut by a fault (sessions
// lost: a server gone, a failover), with more failed operations than ErrorShareLimit,
// aborted or failed (result.Step.FaultReason, IncompleteReason). Their figures describe the
// fault as much as the load: the verdict names it, and the knee, the USL fit, what
// saturated, Little's law, steadiness and stalls judge the complete steps only, since a
// fault's outage reads as a saturated resource or time counted twice.
const VIncomplete = "incomplete"

// judgedSteps returns the steps whose figures the analysis judges: those that measured
// something and completed.
func judgedSteps(steps []Step) []Step {
	out := make([]Step, 0, len(steps))
	for _, s := range steps {
		if !s.NothingMeasured && s.Incomplete == "" {
			out = append(out, s)
		}
	}
	return out
}

// judgedEvidence returns the evidence at the loads of the judged steps.
func judgedEvidence(ev []Evidence, judged []Step) []Evidence {
	loads := map[float64]bool{}
	for _, s := range judged {
		loads[s.Load] = true
	}
	out := make([]Evidence, 0, len(ev))
	for _, e := range ev {
		if loads[e.Load] {
			out = append(out, e)
		}
	}
	return out
}

// incomplete is the verdict on the steps that measured something but did not complete,
// or nil: it names the first such load and its reason, and how many more there were.
func incomplete(st []Step, loadName string) *Verdict {
	var cut []Step
	for _, s := range st {
		if s.Incomplete != "" && !s.NothingMeasured {
			cut = append(cut, s)
		}
	}
	if len(cut) == 0 {
		return nil
	}
	msg := fmt.Sprintf("the step at %s is incomplete, %s", count(cut[0].Load, loadName), cut[0].Incomplete)
	if len(cut) > 1 {
		msg += fmt.Sprintf(", and %d more step(s) are incomplete", len(cut)-1)
	}
	return &Verdict{Code: VIncomplete, Message: msg + ": the knee, what saturated, Little's law, steadiness and stalls do not judge it"}
}

// notJudgedForFaults is the saturation sentence of a run none of whose measured steps
// completed: the first one's reason, never a resource that its outage made look saturated.
func notJudgedForFaults(st []Step, loadName string) (Saturation, bool) {
	for _, s := range st {
		if s.Incomplete != "" && !s.NothingMeasured {
			why := s.Incomplete
			if !strings.HasPrefix(why, result.FaultPrefix) {
				why = "incomplete: " + why
			}
			return Saturation{Sentence: fmt.Sprintf("Not judged: the step at %s was %s, so what saturated is not judged from it.", count(s.Load, loadName), why)}, true
		}
	}
	return Saturation{}, false
}

// incompleteReason is why the repeats of one point did not complete, "" when one did: the
// first repeat's reason.
func incompleteReason(reps []result.Step) string {
	ptrs := make([]*result.Step, len(reps))
	for i := range reps {
		ptrs[i] = &reps[i]
	}
	return LeftOut(ptrs)
}

// LeftOut says why the repeats of one point are left out of every judgement and figure
// shown for them (the knee, compare, the report's tables and headline): none of them
// completed, and the first one's reason is why; "" when one did (the others are then left
// out one by one, CompleteOf).
func LeftOut(reps []*result.Step) string {
	var why string
	for _, st := range reps {
		if st == nil {
			continue
		}
		if st.Complete {
			return ""
		}
		if why == "" {
			why = st.IncompleteReason
		}
	}
	return why
}

// CompleteOf returns the repeats of one point that completed, or all of them when none did
// (LeftOut then says why).
func CompleteOf(reps []*result.Step) []*result.Step {
	var out []*result.Step
	for _, st := range reps {
		if st != nil && st.Complete {
			out = append(out, st)
		}
	}
	if len(out) == 0 {
		return reps
	}
	return out
}

// completeOf is CompleteOf for the steps of a result.
func completeOf(reps []result.Step) []result.Step {
	var out []result.Step
	for _, st := range reps {
		if st.Complete {
			out = append(out, st)
		}
	}
	if len(out) == 0 {
		return reps
	}
	return out
}
