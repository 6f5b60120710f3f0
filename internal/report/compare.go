package report

import (
	"fmt"
	"math"

	"github.com/agbench/agbench/internal/result"
)

// Side is one side of a comparison at one point: the mean of its repeats and their range.
type Side struct {
	Mean, Lo, Hi float64
	// N is the number of repeats behind Mean.
	N     int
	P99Ms float64
}

// Diff is one point compared: B against A.
type Diff struct {
	Point, Variant string
	A, B           Side
	// Pct is (B - A) / A in percent.
	Pct float64
	// Verdict says whether the difference is larger than the run-to-run spread:
	// "larger than spread", "within spread" or "spread unknown".
	Verdict string
}

// Verdicts of a difference.
const (
	Larger        = "larger than spread"
	Within        = "within spread"
	SpreadUnknown = "spread unknown"
)

// Comparison is B compared with A at every point both measured.
type Comparison struct {
	AName, BName string
	// Metric names what was compared ("NOPM", "ops/s").
	Metric   string
	LoadName string
	Diffs    []Diff
	// OneRunEach is true when some point has a single repeat on a side: its spread is unknown.
	OneRunEach bool
}

// Compare compares two variants of one experiment point by point: their throughput (the
// experiment's headline metric) and p99 latency. The spread is the range of each side's
// repeats; a difference counts when the ranges do not overlap.
func Compare(e *Experiment, a, b *Variant) Comparison {
	_, label, get := e.metric()
	c := Comparison{AName: a.Name, BName: b.Name, Metric: label, LoadName: e.pointHeader()}
	for pi := range e.Points {
		fa, fb := a.Cells[pi], b.Cells[pi]
		if fa == nil || fb == nil {
			continue
		}
		d := Diff{Point: e.Points[pi], A: side(fa, get), B: side(fb, get)}
		if d.A.Mean != 0 {
			d.Pct = 100 * (d.B.Mean - d.A.Mean) / d.A.Mean
		}
		switch {
		case d.A.N < 2 || d.B.N < 2:
			d.Verdict = SpreadUnknown
			c.OneRunEach = true
		case d.B.Lo > d.A.Hi || d.A.Lo > d.B.Hi:
			d.Verdict = Larger
		default:
			d.Verdict = Within
		}
		c.Diffs = append(c.Diffs, d)
	}
	return c
}

// side summarises a cell's repeats by the chosen metric. Per-repeat values of a counter are
// read from each step; ops/s from the repeats' throughput.
func side(f *Figures, get func(*Figures) float64) Side {
	s := Side{N: len(f.Steps), P99Ms: ms(f.Latency.P99), Lo: math.Inf(1), Hi: math.Inf(-1)}
	for _, st := range f.Steps {
		one, err := newFigures([]*result.Step{st})
		v := 0.0
		if err == nil {
			v = get(one)
		}
		s.Lo, s.Hi = math.Min(s.Lo, v), math.Max(s.Hi, v)
	}
	s.Mean = get(f)
	return s
}

// Pairs returns what `compare` compares: with one run, its first variant against each other
// variant; with two runs, each variant of the first against the same variant of the second
// (or the first variants when their names differ).
func Pairs(exps []*Experiment) ([][2]*Variant, *Experiment, error) {
	if len(exps) != 1 {
		return nil, nil, fmt.Errorf("the results are of different commands; compare runs of one command")
	}
	e := exps[0]
	var out [][2]*Variant
	switch len(e.Runs) {
	case 1:
		if len(e.Variants) < 2 {
			return nil, nil, fmt.Errorf("%s has one variant: give two results, or one run with --compare", e.Runs[0].Label)
		}
		for _, v := range e.Variants[1:] {
			out = append(out, [2]*Variant{e.Variants[0], v})
		}
	case 2:
		var as, bs []*Variant
		for _, v := range e.Variants {
			if v.Run == e.Runs[0] {
				as = append(as, v)
			} else {
				bs = append(bs, v)
			}
		}
		for _, a := range as {
			for _, b := range bs {
				if a.Variant == b.Variant {
					out = append(out, [2]*Variant{a, b})
				}
			}
		}
		if len(out) == 0 && len(as) > 0 && len(bs) > 0 {
			out = append(out, [2]*Variant{as[0], bs[0]})
		}
	default:
		return nil, nil, fmt.Errorf("compare takes one or two results, got %d", len(e.Runs))
	}
	return out, e, nil
}

// Table renders the comparison like the other tables.
func (c Comparison) Table() Table {
	t := Table{Name: "compare", Title: fmt.Sprintf("B = %s vs A = %s (%s; spread = range of repeats)", c.BName, c.AName, c.Metric),
		Columns: []string{c.LoadName, "A " + c.Metric, "B " + c.Metric, "diff", "A range", "B range", "A p99 ms", "B p99 ms", "verdict"}}
	for _, d := range c.Diffs {
		t.add(txt(d.Point), num(d.A.Mean), num(d.B.Mean), Cell{Text: fmt.Sprintf("%+.1f%%", d.Pct), Value: d.Pct, Num: true},
			rangeCell(d.A), rangeCell(d.B), num(d.A.P99Ms), num(d.B.P99Ms), txt(d.Verdict))
	}
	return t
}

func rangeCell(s Side) Cell {
	if s.N < 2 {
		return txt("1 run")
	}
	return txt(fmtNum(s.Lo) + "–" + fmtNum(s.Hi))
}
