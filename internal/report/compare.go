package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/result"
)

// Side is one side of a comparison at one point: the mean of its repeats and their range.
type Side struct {
	Mean, Lo, Hi float64
	// N is the number of repeats behind Mean, and Measured how many of them measured the
	// metric; Mean, Lo and Hi are of those. With none, the side is absent (not 0).
	N, Measured int
	P99Ms       float64
}

// Diff is one point compared: B against A.
type Diff struct {
	Point, Variant string
	A, B           Side
	// Pct is (B - A) / A in percent; it is computed only when both sides measured the
	// metric (see Compared).
	Pct float64
	// Verdict is the rule for "different" (analyze.Differ): "larger than spread", "no
	// difference measured" or "too little data to compare: why", or why it was not compared.
	Verdict string
	// Difference is the rule's answer (empty Outcome when a side did not measure the metric).
	Difference analyze.Difference
	// Absent says why the point was not compared ("MB/s not measured in routing=on"), or is
	// empty.
	Absent string
	// Faults names a side's failed operations and lost sessions at this point ("B: 2
	// errors (08006), 2 sessions lost, 3.3 s without one"): its figure includes them.
	Faults string
}

// Compared is true when both sides measured the metric and Pct means something.
func (d Diff) Compared() bool { return d.Absent == "" && d.A.Measured > 0 && d.B.Measured > 0 }

// Verdicts of a difference (analyze.Differ's outcomes as the table says them).
const (
	Larger        = "larger than spread"
	Within        = analyze.NoDifference
	SpreadUnknown = analyze.TooLittleData
)

// Comparison is B compared with A at every point both measured.
type Comparison struct {
	AName, BName string
	// Metric names what was compared ("NOPM", "ops/s").
	Metric   string
	LoadName string
	Diffs    []Diff
	// OneRunEach is true when some point had too little data to compare (analyze.Differ):
	// too few operations, too little measured time or no spread on a side.
	OneRunEach bool
}

// Compare compares two variants of one experiment point by point: their throughput (the
// experiment's headline metric) and p99 latency. Whether they differ is analyze.Differ's
// rule, the one the run's analysis and the report's headline use.
func Compare(e *Experiment, a, b *Variant) Comparison {
	_, label, get := e.metric()
	c := Comparison{AName: a.Name, BName: b.Name, Metric: label, LoadName: e.pointHeader()}
	for pi := range e.Points {
		if a.Cells[pi] == nil || b.Cells[pi] == nil {
			continue
		}
		d := Diff{Point: e.Points[pi]}
		var faults, leftOut []string
		for _, f := range []struct {
			name string
			fig  *Figures
		}{{"A", a.Cells[pi]}, {"B", b.Cells[pi]}} {
			if n := faultNote(f.fig); n != "" {
				faults = append(faults, f.name+": "+n)
			}
			if _, why := completeCell(f.fig); why != "" {
				leftOut = append(leftOut, f.name+" "+why)
			}
		}
		d.Faults = strings.Join(faults, "; ")
		fa, _ := completeCell(a.Cells[pi])
		fb, _ := completeCell(b.Cells[pi])
		d.A, d.B = side(fa, get), side(fb, get)
		var absent []string
		if d.A.Measured == 0 && fa != nil {
			absent = append(absent, a.Name)
		}
		if d.B.Measured == 0 && fb != nil {
			absent = append(absent, b.Name)
		}
		if len(absent) > 0 || fa == nil || fb == nil {
			d.Absent = strings.Join(leftOut, "; ")
			if len(absent) > 0 {
				d.Absent = strings.TrimPrefix(d.Absent+"; "+notMeasured(label, absent), "; ")
			}
			d.Verdict = "not compared: " + d.Absent
			c.Diffs = append(c.Diffs, d)
			continue
		}
		if d.A.Mean != 0 {
			d.Pct = 100 * (d.B.Mean - d.A.Mean) / d.A.Mean
		}
		d.Difference = differ(a.Name, fa, b.Name, fb, get)
		switch d.Difference.Outcome {
		case analyze.Different:
			d.Verdict = Larger
		case analyze.NoDifference:
			d.Verdict = Within
		default:
			d.Verdict = SpreadUnknown + ": " + d.Difference.Why
			c.OneRunEach = true
		}
		if len(leftOut) > 0 {
			d.Verdict += " (" + strings.Join(leftOut, "; ") + ")"
		}
		c.Diffs = append(c.Diffs, d)
	}
	return c
}

// differ applies analyze.Differ to two cells by the experiment's metric.
func differ(aName string, fa *Figures, bName string, fb *Figures, get func(*Figures) (float64, bool)) analyze.Difference {
	metric := func(st *result.Step) (float64, bool) {
		one, err := newFigures([]*result.Step{st})
		if err != nil {
			return 0, false
		}
		return get(one)
	}
	return analyze.Differ(analyze.SideOf(aName, fa.Steps, metric), analyze.SideOf(bName, fb.Steps, metric))
}

// completeCell is a cell's figures of its complete steps, nil when none completed, and
// why the others were left out ("" when none was): a step cut by a fault, aborted or failed
// measured the fault as much as the load (result.Step.FaultReason), and is compared with
// nothing.
func completeCell(f *Figures) (*Figures, string) {
	if why := analyze.LeftOut(f.Steps); why != "" {
		return nil, "left out, incomplete: " + why
	}
	keep := analyze.CompleteOf(f.Steps)
	if len(keep) == len(f.Steps) {
		return f, ""
	}
	var first string
	for _, st := range f.Steps {
		if !st.Complete {
			first = st.IncompleteReason
			break
		}
	}
	reason := fmt.Sprintf("%d of %d repeats left out, incomplete (the first: %s)", len(f.Steps)-len(keep), len(f.Steps), first)
	c, err := newFigures(keep)
	if err != nil {
		return nil, reason
	}
	c.Label = f.Label
	return c, reason
}

// side summarises a cell's repeats by the chosen metric. Per-repeat values of a counter are
// read from each step; ops/s from the repeats' throughput. A repeat that did not measure
// the metric is left out of the range; a side none of whose repeats did is absent.
func side(f *Figures, get func(*Figures) (float64, bool)) Side {
	if f == nil { // every repeat left out
		return Side{}
	}
	s := Side{N: len(f.Steps), P99Ms: ms(f.Latency.P99), Lo: math.Inf(1), Hi: math.Inf(-1)}
	for _, st := range f.Steps {
		one, err := newFigures([]*result.Step{st})
		if err != nil {
			continue
		}
		if v, ok := get(one); ok {
			s.Measured++
			s.Lo, s.Hi = math.Min(s.Lo, v), math.Max(s.Hi, v)
		}
	}
	if s.Measured > 0 {
		s.Mean, _ = get(f)
	} else {
		s.Lo, s.Hi = 0, 0
	}
	return s
}

// Pairs returns what `compare` compares: with one run, its first variant against each other
// variant; with two runs, each variant of the first against the same variant of the second
// (or the first variants when their names differ).
func Pairs(exps []*Experiment) ([][2]*Variant, *Experiment, error) {
	if len(exps) != 1 {
		return nil, nil, mismatch(exps)
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

// faultNote sums a point's failed operations (by SQLSTATE) and lost sessions over its
// repeats, or "" when it had none.
func faultNote(f *Figures) string {
	var errs, lost int64
	var down float64
	states := map[string]bool{}
	var codes []string
	for _, st := range f.Steps {
		for _, e := range st.Errors {
			errs += e.Count
			if !states[e.SQLState] {
				states[e.SQLState] = true
				codes = append(codes, e.SQLState)
			}
		}
		if r := st.Reconnects; r != nil {
			lost += r.Lost
			down += r.DownSeconds
		}
	}
	var parts []string
	if errs > 0 {
		parts = append(parts, fmt.Sprintf("%d errors (%s)", errs, strings.Join(codes, " ")))
	}
	if lost > 0 {
		parts = append(parts, fmt.Sprintf("%d sessions lost, %.1f s without one", lost, down))
	}
	return strings.Join(parts, ", ")
}

// Table renders the comparison like the other tables; a faults column names the points
// where a side failed operations or lost sessions, when some did.
func (c Comparison) Table() Table {
	t := Table{Name: "compare", Title: fmt.Sprintf("B = %s vs A = %s (%s; different = spreads of repeats or of per-second throughput apart)", c.BName, c.AName, c.Metric),
		Columns: []string{c.LoadName, "A " + c.Metric, "B " + c.Metric, "diff", "A range", "B range", "A p99 ms", "B p99 ms", "verdict"}}
	faults := false
	for _, d := range c.Diffs {
		faults = faults || d.Faults != ""
	}
	if faults {
		t.Columns = append(t.Columns, "faults")
	}
	for _, d := range c.Diffs {
		diff := absentCell()
		if d.Compared() {
			diff = Cell{Text: fmt.Sprintf("%+.1f%%", d.Pct), Value: d.Pct, Num: true}
			if d.Verdict != Larger { // not a finding: the rule says no difference, or cannot tell
				diff.Text = "(" + diff.Text + ")"
			}
		}
		row := []Cell{txt(d.Point), meanCell(d.A), meanCell(d.B), diff,
			rangeCell(d.A), rangeCell(d.B), num(d.A.P99Ms), num(d.B.P99Ms), txt(d.Verdict)}
		if faults {
			row = append(row, txt(d.Faults))
		}
		t.add(row...)
	}
	return t
}

// absentCell is a figure that was not measured: "–", never 0.
func absentCell() Cell { return txt("–") }

func meanCell(s Side) Cell {
	if s.Measured == 0 {
		return absentCell()
	}
	return num(s.Mean)
}

func rangeCell(s Side) Cell {
	switch {
	case s.Measured == 0:
		return absentCell()
	case s.Measured < 2:
		return txt("1 run")
	}
	return txt(fmtNum(s.Lo) + "–" + fmtNum(s.Hi))
}

// mismatch says why runs that Build made into more than one experiment cannot be compared:
// other commands, or one command sweeping other knobs, each named.
func mismatch(exps []*Experiment) error {
	var names []string
	same := true
	for _, e := range exps {
		same = same && e.Command == exps[0].Command
		for _, r := range e.Runs {
			swept := "sweeps " + strings.Join(sweptParams(r), ", ")
			if len(sweptParams(r)) == 0 {
				swept = "one load, no sweep"
			}
			names = append(names, fmt.Sprintf("%s (%s, %s)", r.Label, e.Command, swept))
		}
	}
	if same {
		return fmt.Errorf("the results sweep different knobs: %s; compare runs that sweep the same ones", strings.Join(names, " and "))
	}
	return fmt.Errorf("the results are of different commands: %s; compare runs of one command", strings.Join(names, " and "))
}
