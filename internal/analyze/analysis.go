package analyze

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/agbench/agbench/internal/units"
)

// Input is everything the analysis reads from one run.
type Input struct {
	// LoadName names the swept knob in sentences ("VUs", "threads"); Unit the throughput's.
	LoadName string     `json:"load_name"`
	Unit     string     `json:"unit"`
	Steps    []Step     `json:"steps"`
	Evidence []Evidence `json:"evidence,omitempty"`
	Facts    Facts      `json:"facts"`
	SLOs     []SLO      `json:"slos,omitempty"`
}

// Analysis is the judgement of a run, stored in its result and printed after its table.
type Analysis struct {
	LoadName  string     `json:"load_name"`
	Unit      string     `json:"unit"`
	Knee      Knee       `json:"knee"`
	USL       *USL       `json:"usl,omitempty"` // only when the fit is good
	Little    []Little   `json:"little,omitempty"`
	Saturated Saturation `json:"saturated"`
	Verdicts  []Verdict  `json:"verdicts"`
	// SharedHosts are the machines that carry several nodes, as their exporters described
	// them: each judged once, for all its nodes (onehost.go).
	SharedHosts []SharedHost `json:"shared_hosts,omitempty"`
}

// Analyze runs every analysis on a run.
func Analyze(in Input) Analysis {
	if in.LoadName == "" {
		in.LoadName = "VUs"
	}
	if in.Unit == "" {
		in.Unit = "ops/s"
	}
	a := Analysis{LoadName: in.LoadName, Unit: in.Unit}
	// Steps that measured nothing, or did not complete (a fault cut them), draw no knee.
	measured := judgedSteps(in.Steps)
	a.Knee = FindKnee(measured, in.SLOs)
	if u, ok := FitUSL(measured); ok && u.Good {
		a.USL = &u
	}
	a.Little = CheckLittle(measured)
	a.Saturated = WhatSaturated(a.Knee, judgedEvidence(in.Evidence, measured), in.LoadName)
	faults, cut := notJudgedForFaults(in.Steps, in.LoadName)
	switch {
	case len(measured) == 0 && cut:
		a.Saturated = faults
	case len(measured) == 0 && len(in.Steps) > 0:
		a.Saturated = Saturation{Sentence: "Not judged: no step measured a successful operation."}
	case unsampled(in.Evidence, in.Facts) != nil:
		a.Saturated = Saturation{Sentence: "Not judged: no sampler ran, so what saturated is not known."}
	}
	a.Verdicts = Check(in.Steps, in.Evidence, in.Facts, in.LoadName)
	a.SharedHosts = SharedHosts(in.Evidence)
	if a.Verdicts == nil {
		a.Verdicts = []Verdict{}
	}
	return a
}

// WriteText prints the analysis for a terminal: the knee line, the USL line when it fits,
// the saturation sentence and the validity verdicts. Every workload ends its output with it.
func (a Analysis) WriteText(w io.Writer) error {
	var b strings.Builder
	b.WriteString("knee: " + a.kneeLine() + "\n")
	if u := a.USL; u != nil {
		peak := "no peak (κ = 0)"
		if !math.IsInf(u.PeakLoad, 1) {
			peak = fmt.Sprintf("peak %s %s at %s", num(u.PeakThroughput), a.Unit, count(math.Round(u.PeakLoad), a.LoadName))
		}
		fmt.Fprintf(&b, "USL: σ=%.3g κ=%.3g λ=%s %s, %s (R² %.3f, %d loads)\n", u.Sigma, u.Kappa, num(u.Lambda), a.Unit, peak, u.R2, u.Points)
	}
	if a.Saturated.Sentence != "" {
		b.WriteString("saturated: " + a.Saturated.Sentence + "\n")
	}
	if len(Fired(a.Verdicts)) == 0 {
		b.WriteString("validity: no problem found\n")
	} else {
		b.WriteString("validity:\n")
	}
	for _, v := range a.Verdicts {
		mark := "!"
		if v.NotJudged {
			mark = "?"
		}
		fmt.Fprintf(&b, "  %s %s: %s\n", mark, v.Code, v.Message)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (a Analysis) kneeLine() string {
	k := a.Knee
	if k.Characteristic == nil {
		for _, v := range a.Verdicts {
			if v.Code == VNothingMeasured {
				return "not drawn: no step measured a successful operation"
			}
			if v.Code == VIncomplete {
				return "not drawn: no step that measured operations completed (" + VIncomplete + " below)"
			}
		}
		return "no steps measured"
	}
	pt := func(p *Point) string {
		return fmt.Sprintf("%s (%s %s, mean %s, p99 %s)", count(p.Load, a.LoadName), num(p.Throughput), a.Unit, ms(p.MeanMs), ms(p.P99Ms))
	}
	parts := []string{"characteristic latency " + ms(k.Characteristic.MeanMs) + " at " + count(k.Characteristic.Load, a.LoadName)}
	switch {
	case k.Knee != nil:
		s := "knee " + pt(k.Knee)
		if n := len(k.KneeLoads); n > 1 {
			s += fmt.Sprintf(" [repeats %s..%s]", fmtNum(k.KneeLoads[0]), fmtNum(k.KneeLoads[n-1]))
		}
		parts = append(parts, s)
	case k.RisingAtEnd:
		parts = append(parts, "no knee: throughput still rising at "+count(k.Peak.Load, a.LoadName))
	default:
		parts = append(parts, "no knee found")
	}
	if k.Efficient != nil {
		parts = append(parts, "most efficient "+count(k.Efficient.Load, a.LoadName))
	}
	if k.Saturation != nil {
		parts = append(parts, fmt.Sprintf("saturation %s (≥%.0f%% of peak %s %s at %s)", count(k.Saturation.Load, a.LoadName),
			100*SaturationShare, num(k.Peak.Throughput), a.Unit, fmtNum(k.Peak.Load)))
	}
	if len(k.SLOs) > 0 {
		var names []string
		for _, s := range k.SLOs {
			names = append(names, s.String())
		}
		slo := "SLO " + strings.Join(names, ",") + ": "
		if k.SLOPoint != nil {
			slo += fmt.Sprintf("met up to %s (%s %s)", count(k.SLOPoint.Load, a.LoadName), num(k.SLOPoint.Throughput), a.Unit)
		} else {
			slo += "not met at any load"
		}
		parts = append(parts, slo)
	}
	return strings.Join(parts, " · ")
}

func ms(x float64) string {
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f ms", x)
	case x >= 1:
		return fmt.Sprintf("%.2g ms", x)
	default:
		return fmt.Sprintf("%.2f ms", x)
	}
}

// num prints a rate with thousands separators and no needless fraction.
func num(x float64) string {
	if math.Abs(x) < 100 {
		return fmt.Sprintf("%.3g", x)
	}
	return units.GroupDigits(fmt.Sprintf("%.0f", x))
}
