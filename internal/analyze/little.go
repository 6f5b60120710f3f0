package analyze

import "github.com/agbench/agbench/internal/result"

// LittleTolerance is how far X·(R+Z) may stray from the concurrency N, as a share of N,
// before Little's law is said to fail for a closed-loop step.
const LittleTolerance = 0.15

// Little checks Little's law on one closed-loop step: with N users each always either
// waiting for an operation (R) or thinking (Z), throughput X must satisfy X·(R+Z) = N.
// A ratio well under 1 means time the client spent outside the measured operations (its
// own CPU, scheduling, recording); over 1 means latency or throughput was over-counted.
type Little struct {
	Load    float64 `json:"load"`
	Implied float64 `json:"implied"` // X·(R+Z)
	Ratio   float64 `json:"ratio"`   // Implied / Load
	Holds   bool    `json:"holds"`
	// InFlightMax is the most that the operations still running when the window closed can
	// add to Implied: their time in the window is in no latency. Only how many there were and
	// the oldest's age are recorded, so it is the count times that age (within the window)
	// over the window; the law fails only when no share of it up to this brings Implied to N.
	InFlightMax float64 `json:"in_flight_max,omitempty"`
	OpenLoop    bool    `json:"open_loop,omitempty"` // not checked: load is an arrival rate
	// NotJudged says why Implied and Ratio could not be computed (no throughput, think
	// time unknown); they are then absent, not 0, and Holds says nothing.
	NotJudged string `json:"not_judged,omitempty"`
}

// Judged reports whether Implied (and, for a closed loop, Ratio) were computed.
func (l Little) Judged() bool { return l.NotJudged == "" }

// CheckLittle checks every step, in load order.
func CheckLittle(steps []Step) []Little {
	var out []Little
	for _, s := range sortedSteps(steps) {
		l := Little{Load: s.Load, OpenLoop: s.OpenLoop}
		switch {
		case s.ThinkUnknown:
			l.NotJudged = "think time unknown"
		case s.Throughput <= 0:
			l.NotJudged = "no throughput measured"
		}
		if s.OpenLoop && !s.ThinkUnknown {
			l.Implied = s.Throughput * (s.MeanMs + s.ThinkMs) / 1000 // shown, not judged
		}
		if s.OpenLoop || s.ThinkUnknown || s.Throughput <= 0 {
			l.Holds = true
			out = append(out, l)
			continue
		}
		l.Implied = s.Throughput * (s.MeanMs + s.ThinkMs) / 1000
		l.Ratio = l.Implied / s.Load
		if s.InFlight > 0 && s.WindowSec > 0 {
			l.InFlightMax = float64(s.InFlight) * min(s.InFlightOldestSec, s.WindowSec) / s.WindowSec
		}
		l.Holds = l.Ratio <= 1+LittleTolerance && (l.Implied+l.InFlightMax)/s.Load >= 1-LittleTolerance
		out = append(out, l)
	}
	return out
}

// recordedMean is the mean latency of several histograms: their recorded means weighted by
// their counts (a tester's exact mean, as agbench disk records it, rather than the mean of
// the merged buckets), or merged when no histogram recorded one.
func recordedMean(hs []result.Hist, merged float64) float64 {
	var sum float64
	var n int64
	for _, h := range hs {
		if h.Count > 0 {
			if h.Mean <= 0 {
				return merged
			}
			sum += h.Mean * float64(h.Count)
			n += h.Count
		}
	}
	if n == 0 {
		return merged
	}
	return sum / float64(n)
}
