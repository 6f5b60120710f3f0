package analyze

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/stats"
	"github.com/agbench/agbench/internal/units"
)

// The rule for "different": the one place that says whether two variants (or two runs) at
// one load differ. The run's analysis, the report's headline and `agbench compare` all ask
// Differ, so none of them names a winner the others call noise.
const (
	// MinCompareOps is the fewest successful operations a side needs to be compared: below
	// it one operation more or less moves its throughput by 1% or more, and a handful of
	// slow operations (a connection's first query, a checkpoint) decide the figure.
	MinCompareOps = 100
	// MinCompareSeconds is the least measured time a side needs (its usable steps' windows
	// summed): a shorter side measures connection set-up and warm-up rather than the load,
	// and its per-second throughput has too few intervals to show a spread.
	MinCompareSeconds = 2.0
	// MinSpreadSamples is the fewest samples (repeats, or per-interval throughputs) a side
	// needs for its spread to be known: one or two samples are their own range and say
	// nothing of the noise.
	MinSpreadSamples = 3
	// PercentileSpreadSamples is the fewest samples whose spread is their 10th–90th
	// percentile range (one outlying second does not hide a difference); fewer are spread
	// over their whole range, min to max, as interpolated percentiles of three or five
	// samples would claim a narrower spread than was measured.
	PercentileSpreadSamples = 10
	// MaxChanceApart is the largest chance, for two sides drawn from one distribution,
	// that their samples come apart in order by chance alone (every sample of one above
	// every sample of the other: 2 of the C(n+m, n) equally likely orders). Three samples a
	// side come apart one time in ten; the rule for "different" needs more samples than
	// that: 4 and 4 (1 in 35), or 3 and 5 (1 in 28).
	MaxChanceApart = 0.05
)

// chanceApart is the chance that n and m samples of one distribution come apart in order
// by chance alone: 2 / C(n+m, n).
func chanceApart(n, m int) float64 {
	c := 1.0
	for i := 1; i <= n; i++ {
		c = c * float64(m+i) / float64(i)
	}
	return 2 / c
}

// enoughSamples says whether n and m samples are enough for the rule for "different": each
// MinSpreadSamples and, together, few enough orders that put them apart by chance.
func enoughSamples(n, m int) bool {
	return n >= MinSpreadSamples && m >= MinSpreadSamples && chanceApart(n, m) <= MaxChanceApart
}

// Outcomes of Differ.
const (
	// Different: the sides' spreads do not overlap; the winner is named.
	Different = "different"
	// NoDifference: the spreads overlap: no difference measured.
	NoDifference = "no difference measured"
	// TooLittleData: a side has too few operations, too little measured time or too few
	// samples for its spread (or no usable step): nothing can be said either way.
	TooLittleData = "too little data to compare"
)

// Side is one side of a comparison at one load, as Differ reads it: made by SideOf from
// the side's steps (repeats) with failed and aborted steps left out.
type Side struct {
	Name string
	// Repeats holds the metric of each usable step (repeat); Intervals the metric's
	// per-interval values over all of them (per-second throughput).
	Repeats   []float64
	Intervals []float64
	// Ops counts the usable steps' successful operations; Seconds their measured windows.
	// OfOps is false for steps that count no operations at all (seed's phases, which count
	// rows and bytes): MinCompareOps does not apply to them.
	Ops     int64
	Seconds float64
	OfOps   bool
	// Excluded says which steps were left out and why ("1 incomplete step"), or is empty.
	Excluded []string
	// AskedRate is the operations per second the side's fixed-rate steps were asked, and
	// DoneRate what they did (result.DoneRate), when the side compares throughput and every
	// usable step asked the same rate; 0 otherwise.
	AskedRate, DoneRate float64
}

// SideOf collects one side of a comparison from its steps (the repeats of one load).
// metric gives a step's figure (nil: operations per second); ok false leaves the step out
// as not having measured it. A step that did not complete (failed: too many errors;
// aborted: cut short; cut by a fault: result.Step.FaultReason) or whose operations finished
// none (MeasuredNothing) is left out and named in Excluded. The per-interval values are the step's per-second throughput, scaled by the
// step's metric over its operations per second when the metric is another (NOPM, MB/s):
// the metric's spread within the window is taken to be its throughput's.
func SideOf(name string, steps []*result.Step, metric func(*result.Step) (float64, bool)) Side {
	s := Side{Name: name}
	incomplete, empty, unmeasured := 0, 0, 0
	for _, st := range steps {
		if st == nil {
			continue
		}
		switch {
		case !st.Complete:
			incomplete++
			continue
		case MeasuredNothing([]*result.Step{st}):
			empty++
			continue
		}
		v, scale := st.OpsPerSecond(), 1.0
		if metric != nil {
			m, ok := metric(st)
			if !ok {
				unmeasured++
				continue
			}
			if v > 0 {
				scale = m / v
			}
			v = m
		}
		s.Repeats = append(s.Repeats, v)
		s.Ops += st.Totals().Count
		s.OfOps = s.OfOps || len(st.Ops) > 0 || len(st.Throughput) > 0
		s.Seconds += st.Window.Seconds()
		if ts, ok := st.Throughput["*"]; ok {
			s.Intervals = append(s.Intervals, wholeIntervals(ts, scale)...)
		}
	}
	plural := func(n int, what string) string {
		if n == 1 {
			return "1 " + what + " step"
		}
		return fmt.Sprintf("%d %s steps", n, what)
	}
	if incomplete > 0 {
		s.Excluded = append(s.Excluded, plural(incomplete, "incomplete (failed, aborted or cut by a fault)"))
	}
	if empty > 0 {
		s.Excluded = append(s.Excluded, plural(empty, "empty (no successful operation)"))
	}
	if unmeasured > 0 {
		s.Excluded = append(s.Excluded, plural(unmeasured, "unmeasured"))
	}
	if metric == nil {
		s.AskedRate, s.DoneRate = askedRate(steps)
	}
	return s
}

// askedRate is the rate every usable step of a side asked and the rate they did, or zeros
// when a step asked none or another rate.
func askedRate(steps []*result.Step) (asked, done float64) {
	var usable []*result.Step
	for _, st := range steps {
		if st == nil || !st.Complete || MeasuredNothing([]*result.Step{st}) {
			continue
		}
		if st.Rate <= 0 || (asked > 0 && st.Rate != asked) {
			return 0, 0
		}
		asked = st.Rate
		usable = append(usable, st)
	}
	if d, ok := result.DoneRate(usable...); ok && asked > 0 {
		return asked, d
	}
	return 0, 0
}

// bothKeptRate says why two sides asked the same fixed rate do not differ in throughput
// when both kept it (did no less than RateShortfallLimit under it): each side's throughput
// is then its schedule's, and what one fell behind by is the machine's delay, not the
// variant's; their latencies compare them. Empty when that is not so.
func bothKeptRate(a, b Side) string {
	if a.AskedRate <= 0 || a.AskedRate != b.AskedRate {
		return ""
	}
	least := (1 - RateShortfallLimit) * a.AskedRate
	if a.DoneRate < least || b.DoneRate < least {
		return ""
	}
	return fmt.Sprintf("both kept the asked %s/s (%s did %s/s, %s %s/s): at a fixed rate throughput is the schedule's, and a shortfall within the %.0f%% rate-not-kept allows is the machine's delay, not the variant's; compare their latencies",
		fmtRate(a.AskedRate), a.Name, bound(a.DoneRate), b.Name, bound(b.DoneRate), RateShortfallLimit*100)
}

// wholeIntervals returns a per-interval throughput series' values times scale, leaving out
// intervals shorter than half the longest (the window's last, partial interval: a few
// operations over a fraction of a tick are noisier than the rest) and values not finite.
func wholeIntervals(ts result.TimeSeries, scale float64) []float64 {
	n := min(len(ts.T), len(ts.V))
	longest, prev := 0.0, 0.0
	for i := 0; i < n; i++ {
		longest, prev = max(longest, ts.T[i]-prev), ts.T[i]
	}
	var out []float64
	prev = 0
	for i := 0; i < n; i++ {
		x := ts.V[i]
		if ts.T[i]-prev >= longest/2 && !math.IsNaN(x) && !math.IsInf(x, 0) {
			out = append(out, x*scale)
		}
		prev = ts.T[i]
	}
	return out
}

// Difference is Differ's answer for one load.
type Difference struct {
	// Outcome is Different, NoDifference or TooLittleData.
	Outcome string `json:"outcome"`
	// Winner is the side with the higher median (Different only); Ratio its median over
	// the other's, 0 (absent) when the other's median was 0.
	Winner string  `json:"winner,omitempty"`
	Ratio  float64 `json:"ratio,omitempty"`
	// Spread says which samples gave the spread ("3 repeats", "per-second throughput").
	Spread string `json:"spread,omitempty"`
	// Why says what is missing (TooLittleData) or what overlapped (NoDifference).
	Why string `json:"why,omitempty"`
}

// Differ applies the rule for "different" to two sides at one load. Each side needs
// MinCompareOps successful operations and MinCompareSeconds of measured time in steps that
// completed; the spread comes from the repeats when both sides have enough of them
// (enoughSamples), else from the per-interval throughput of their windows when that is enough.
// Two sides that asked the same fixed rate and both kept it do not differ in throughput
// (bothKeptRate). Sides whose spreads (spreadOf) do not overlap differ, and the one with the higher
// median wins; overlapping ranges are "no difference measured"; anything short of the rule
// is "too little data to compare", saying what was missing.
func Differ(a, b Side) Difference {
	var short []string
	for _, s := range []Side{a, b} {
		var why []string
		if len(s.Repeats) == 0 {
			why = append(why, "no usable step")
		}
		if len(s.Repeats) > 0 && s.OfOps && s.Ops < MinCompareOps {
			why = append(why, fmt.Sprintf("%d operations (%d needed)", s.Ops, MinCompareOps))
		}
		if len(s.Repeats) > 0 && s.Seconds < MinCompareSeconds {
			why = append(why, fmt.Sprintf("%.2f s measured (%g s needed)", s.Seconds, MinCompareSeconds))
		}
		if len(why) > 0 && len(s.Excluded) > 0 {
			why = append(why, strings.Join(s.Excluded, ", ")+" left out")
		}
		if len(why) > 0 {
			short = append(short, s.Name+": "+strings.Join(why, ", "))
		}
	}
	if len(short) > 0 {
		return Difference{Outcome: TooLittleData, Why: strings.Join(short, "; ")}
	}
	if why := bothKeptRate(a, b); why != "" {
		return Difference{Outcome: NoDifference, Spread: "the asked rate", Why: why}
	}
	as, bs, spread := samplesOf(a, b)
	if as == nil {
		return Difference{Outcome: TooLittleData, Why: fmt.Sprintf("the spread is unknown: %s; %d of either needed per side", has(a, b), MinSpreadSamples)}
	}
	alo, ahi, amed, arange := spreadOf(as)
	blo, bhi, bmed, brange := spreadOf(bs)
	if alo <= bhi && blo <= ahi {
		return Difference{Outcome: NoDifference, Spread: spread, Why: fmt.Sprintf("%s (%s..%s, %s) and %s (%s..%s, %s) overlap",
			a.Name, bound(alo), bound(ahi), arange, b.Name, bound(blo), bound(bhi), brange)}
	}
	if p := chanceApart(len(as), len(bs)); p > MaxChanceApart {
		return Difference{Outcome: TooLittleData, Why: fmt.Sprintf("the spreads (%s) are apart, but %d and %d samples of one distribution come apart by chance 1 time in %.0f (at most 1 in %.0f allowed; 4 a side are enough): %s",
			spread, len(as), len(bs), 1/p, 1/MaxChanceApart, has(a, b))}
	}
	if amed >= bmed {
		return Difference{Outcome: Different, Winner: a.Name, Ratio: ratioOf(amed, bmed), Spread: spread}
	}
	return Difference{Outcome: Different, Winner: b.Name, Ratio: ratioOf(bmed, amed), Spread: spread}
}

// samplesOf picks the samples whose spreads compare two sides, and says which: the repeats
// when both sides have enough of them (enoughSamples), else the per-second throughput when
// that is enough, else whichever has MinSpreadSamples a side (repeats first: their spreads
// may still overlap, though apart they would prove nothing), else nil.
func samplesOf(a, b Side) (as, bs []float64, spread string) {
	reps := fmt.Sprintf("%d and %d repeats", len(a.Repeats), len(b.Repeats))
	switch {
	case enoughSamples(len(a.Repeats), len(b.Repeats)):
		return a.Repeats, b.Repeats, reps
	case enoughSamples(len(a.Intervals), len(b.Intervals)):
		return a.Intervals, b.Intervals, "per-second throughput"
	case min(len(a.Repeats), len(b.Repeats)) >= MinSpreadSamples:
		return a.Repeats, b.Repeats, reps
	case min(len(a.Intervals), len(b.Intervals)) >= MinSpreadSamples:
		return a.Intervals, b.Intervals, "per-second throughput"
	}
	return nil, nil, ""
}

// has says how many samples each side has.
func has(a, b Side) string {
	return fmt.Sprintf("%s has %d repeat(s) and %d per-second sample(s), %s %d and %d", a.Name, len(a.Repeats), len(a.Intervals), b.Name, len(b.Repeats), len(b.Intervals))
}

// bound is a spread's end to 4 significant digits, and from 10,000 on a grouped whole number
// ("25,520", not %.4g's "2.552e+04").
func bound(x float64) string {
	if math.Abs(x) >= 1e4 {
		return units.GroupDigits(fmt.Sprintf("%.0f", x))
	}
	return fmt.Sprintf("%.4g", x)
}

// spreadOf is a side's spread and median, and what the spread is ("min–max of 3 repeats").
func spreadOf(xs []float64) (lo, hi, med float64, what string) {
	med = stats.Quantile(xs, 0.5)
	if len(xs) < PercentileSpreadSamples {
		return slices.Min(xs), slices.Max(xs), med, fmt.Sprintf("min–max of %d", len(xs))
	}
	return stats.Quantile(xs, 0.1), stats.Quantile(xs, 0.9), med, fmt.Sprintf("10th–90th percentile of %d", len(xs))
}

// Verdict is the comparison's verdict on what, or nil when the sides differ: NoDifference
// is VNoDifference, TooLittleData VTooLittleData, each saying so in its message.
func (d Difference) Verdict(what string) *Verdict {
	switch d.Outcome {
	case NoDifference:
		return &Verdict{Code: VNoDifference, Message: fmt.Sprintf("%s: %s: no difference measured", what, d.Why)}
	case TooLittleData:
		return &Verdict{Code: VTooLittleData, Message: fmt.Sprintf("%s: too little data to compare (%s): no difference can be claimed either way", what, d.Why)}
	}
	return nil
}

// Sentence says in a few words what the rule found: "routing=on ahead, 1.20× (medians of
// per-second throughput; spreads apart)", "no difference measured" or
// "too little data to compare".
func (d Difference) Sentence() string {
	if d.Outcome == Different && d.Ratio <= 0 {
		return fmt.Sprintf("%s ahead; the other side's median 0 (medians of %s; spreads apart)", d.Winner, d.Spread)
	}
	if d.Outcome == Different {
		return fmt.Sprintf("%s ahead, %.2f× (medians of %s; spreads apart)", d.Winner, d.Ratio, d.Spread)
	}
	return d.Outcome
}

// VTooLittleData is the comparison's verdict when a side had too few operations, too little
// measured time or too few samples for the rule for "different" (Differ).
const VTooLittleData = "too-little-data"
