package analyze

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agbench/agbench/internal/result"
)

// VNothingMeasured is the verdict on steps (or a whole run) that measured no successful
// operation: a window of failures, or of a workload too slow to finish one (tpcc --keying
// over a few seconds). Such steps carry no throughput or latency: the knee, the
// characteristic latency, the saturation point, the USL fit and Little's law are drawn
// from the other steps only, and from none when no step measured anything.
const VNothingMeasured = "nothing-measured"

// MeasuredNothing says whether the repeats of one point, made of operations (op types,
// a per-second throughput, or a step cut short), completed none successfully: their
// figures (0 ops/s, 0 NOPM) are not measurements. A step of no operations at all (seed's
// phases, which count rows and bytes) is not judged by it.
func MeasuredNothing(reps []*result.Step) bool {
	ofOps := false
	for _, st := range reps {
		if st == nil {
			continue
		}
		if st.Totals().Count > 0 {
			return false
		}
		ofOps = ofOps || len(st.Ops) > 0 || len(st.Throughput) > 0 || !st.Complete
	}
	return ofOps
}

// measuredSteps returns the steps that measured something (NothingMeasured unset).
func measuredSteps(steps []Step) []Step {
	out := make([]Step, 0, len(steps))
	for _, s := range steps {
		if !s.NothingMeasured {
			out = append(out, s)
		}
	}
	return out
}

// nothingMeasured is the verdict on the steps that measured nothing, or nil when every step
// measured something. It names the first such load, the failures there, and how many
// steps of how many measured nothing.
func nothingMeasured(st []Step, loadName string) *Verdict {
	var empty []Step
	for _, s := range st {
		if s.NothingMeasured {
			empty = append(empty, s)
		}
	}
	if len(empty) == 0 {
		return nil
	}
	s := empty[0]
	msg := fmt.Sprintf("0 successful operations at %s", count(s.Load, loadName))
	if s.Errors > 0 {
		msg += fmt.Sprintf(" (%d failed", s.Errors)
		if len(s.ErrorClasses) > 0 {
			msg += ", SQLSTATE " + strings.Join(s.ErrorClasses, " ")
		}
		msg += ")"
	}
	if s.WindowSec > 0 {
		msg += fmt.Sprintf(" in %.2f s", s.WindowSec)
	}
	if len(empty) == len(st) {
		if len(st) > 1 {
			msg += fmt.Sprintf(", nor at any of the other %d steps", len(st)-1)
		}
		return &Verdict{Code: VNothingMeasured, Message: msg + ": the run measured nothing, so it has no throughput, latency, knee or saturation point"}
	}
	if len(empty) > 1 {
		msg += fmt.Sprintf(", and at %d more of %d steps", len(empty)-1, len(st))
	}
	return &Verdict{Code: VNothingMeasured, Message: msg + ": those steps are left out of the knee, the saturation point and the USL fit"}
}

// steadiness judges whether throughput was steady in each step (unsteady): the first step
// that was not fires VNotSteady; otherwise, steps with fewer than MinSteadySamples
// per-second throughputs are named in one "not judged" verdict. Steps that keep no
// per-second throughput at all (seed's phases, readahead's queries) are not judged by it.
func steadiness(st []Step, loadName string) []Verdict {
	var short []Step
	for _, s := range st {
		if len(s.PerSecond) == 0 {
			continue // a workload that keeps no per-second throughput (seed, readahead)
		}
		if len(s.PerSecond) < MinSteadySamples {
			short = append(short, s)
			continue
		}
		if why := unsteady(s.PerSecond); why != "" {
			return []Verdict{{Code: VNotSteady, Message: fmt.Sprintf("throughput at %s was not steady: %s", count(s.Load, loadName), why)}}
		}
	}
	if len(short) == 0 {
		return nil
	}
	s := short[0]
	samples := fmt.Sprintf("%d per-second samples", len(s.PerSecond))
	if len(s.PerSecond) == 1 {
		samples = "1 per-second sample"
	}
	why := fmt.Sprintf("%s at %s, %d needed", samples, count(s.Load, loadName), MinSteadySamples)
	if len(short) > 1 {
		why += fmt.Sprintf(" (and too few at %d more of %d steps)", len(short)-1, len(st))
	}
	return []Verdict{notJudged(VNotSteady, why)}
}

// VSamplers names, in one "not judged" line, the verdicts that rest on the samplers when
// none ran (--sample=false): the rest (errors, nothing measured, steadiness, Little's law,
// the comparison of variants) need only the load generator's own figures and are judged.
const VSamplers = "sampler-verdicts"

// unsampled is the one "not judged" verdict of a run whose steps no sampler watched (no
// machine CPU, no database waits, no device), or nil.
func unsampled(ev []Evidence, f Facts) *Verdict {
	if len(ev) == 0 || f.Storage {
		return nil // the storage tester measures its device and CPU itself
	}
	for _, e := range ev {
		if !e.CPUAbsent || !e.WaitsAbsent || e.Device.Name != "" || slices.ContainsFunc(e.NodeHosts, NodeHost.Measured) {
			return nil
		}
	}
	v := notJudged(VSamplers, "no sampler ran, so "+strings.Join([]string{VFitsInMemory, VBusyHost, VSteal, VForeignIO}, ", ")+
		" and what saturated rest on no figures")
	return &v
}
