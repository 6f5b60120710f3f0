package analyze

import (
	"math"
	"sort"
)

// SaturationShare is the share of the highest throughput at which a load counts as
// saturated: the saturation point is the smallest load reaching it.
const SaturationShare = 0.90

// KneedleSensitivity is Kneedle's S: how far (in mean x-steps) the difference curve must fall
// below a local maximum before that maximum is declared the knee (Satopää et al., 2011).
const KneedleSensitivity = 1.0

// MinKneePoints is the fewest loads on which a knee is looked for.
const MinKneePoints = 3

// Point names one step of a sweep by its load, with the figures that made it notable.
type Point struct {
	Load       float64 `json:"load"`
	Throughput float64 `json:"throughput"`
	MeanMs     float64 `json:"mean_ms"`
	P99Ms      float64 `json:"p99_ms"`
}

func pointOf(s Step) *Point {
	return &Point{Load: s.Load, Throughput: s.Throughput, MeanMs: s.MeanMs, P99Ms: s.P99Ms}
}

// Knee is what a sweep says about where load stops paying.
type Knee struct {
	// Characteristic is the lowest load: its latency is the system's characteristic latency.
	Characteristic *Point `json:"characteristic,omitempty"`
	// Efficient is the load with the most throughput per unit of mean latency ("power").
	Efficient *Point `json:"efficient,omitempty"`
	// Knee is Kneedle's knee on log2(load) vs throughput; nil when throughput still rises
	// at the highest load (no knee reached) or there are too few loads.
	Knee *Point `json:"knee,omitempty"`
	// KneeLoads holds the knee of each repeat when steps were repeated: the knee's spread.
	KneeLoads []float64 `json:"knee_loads,omitempty"`
	// Saturation is the smallest load reaching SaturationShare of the highest throughput;
	// nil when throughput still rose at the highest load (RisingAtEnd: no knee reached, so
	// no load is called saturated beside "sweep further").
	Saturation *Point `json:"saturation,omitempty"`
	// Peak is the load with the highest throughput.
	Peak *Point `json:"peak,omitempty"`
	// SLO results, when objectives were given: the highest-throughput load meeting all,
	// and the first load (by load) that broke any.
	SLOs        []SLO  `json:"slos,omitempty"`
	SLOPoint    *Point `json:"slo_point,omitempty"`
	SLOBroken   *Point `json:"slo_broken,omitempty"`
	RisingAtEnd bool   `json:"rising_at_end,omitempty"`
}

// FindKnee analyses a sweep. Steps may come in any order; steps with no load are ignored.
func FindKnee(steps []Step, slos []SLO) Knee {
	st := sortedSteps(steps)
	var k Knee
	if len(st) == 0 {
		return k
	}
	k.Characteristic = pointOf(st[0])
	peak, best := 0, -1.0
	for i, s := range st {
		if s.Throughput > st[peak].Throughput {
			peak = i
		}
		if s.MeanMs > 0 && s.Throughput/s.MeanMs > best {
			best = s.Throughput / s.MeanMs
			k.Efficient = pointOf(s)
		}
	}
	k.Peak = pointOf(st[peak])
	for _, s := range st {
		if s.Throughput >= SaturationShare*st[peak].Throughput {
			k.Saturation = pointOf(s)
			break
		}
	}
	xs, ys := make([]float64, len(st)), make([]float64, len(st))
	for i, s := range st {
		xs[i], ys[i] = math.Log2(s.Load), s.Throughput
	}
	if i, ok := kneedle(xs, ys); ok {
		k.Knee = pointOf(st[i])
	}
	k.KneeLoads = repeatKnees(st, xs)
	k.RisingAtEnd = k.Knee == nil && len(st) >= MinKneePoints && peak == len(st)-1
	if k.RisingAtEnd {
		k.Saturation = nil // throughput still rose at the highest load: nothing saturated yet
	}
	if len(slos) > 0 {
		k.SLOs = slos
		for _, s := range st {
			if !meetsAll(slos, s) {
				if k.SLOBroken == nil {
					k.SLOBroken = pointOf(s)
				}
				continue
			}
			if k.SLOPoint == nil || s.Throughput > k.SLOPoint.Throughput {
				k.SLOPoint = pointOf(s)
			}
		}
	}
	return k
}

func meetsAll(slos []SLO, s Step) bool {
	for _, o := range slos {
		if !o.Met(s) {
			return false
		}
	}
	return true
}

// repeatKnees runs Kneedle on each repeat's curve when every step has the same number of
// repeats (two or more), and returns the sorted knee loads.
func repeatKnees(st []Step, xs []float64) []float64 {
	n := len(st[0].Repeats)
	if n < 2 {
		return nil
	}
	for _, s := range st {
		if len(s.Repeats) != n {
			return nil
		}
	}
	var out []float64
	ys := make([]float64, len(st))
	for r := 0; r < n; r++ {
		for i, s := range st {
			ys[i] = s.Repeats[r]
		}
		if i, ok := kneedle(xs, ys); ok {
			out = append(out, st[i].Load)
		}
	}
	sort.Float64s(out)
	return out
}

// kneedle finds the knee of a concave, increasing curve y(x) (x ascending) by Kneedle:
// normalise both axes to [0,1], take the difference curve y-x, and declare a local maximum
// of it the knee once the curve falls below that maximum minus S times the mean x-step
// before the next local maximum. The first confirmed maximum wins. A curve that is flat from
// the start has its knee at the first point.
func kneedle(xs, ys []float64) (int, bool) {
	n := len(xs)
	if n < MinKneePoints {
		return 0, false
	}
	xmin, xmax, ymin, ymax := xs[0], xs[n-1], ys[0], ys[0]
	for _, y := range ys {
		ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
	}
	if xmax <= xmin || ymax <= 0 {
		return 0, false
	}
	if ys[0] >= SaturationShare*ymax {
		return 0, true // more load never paid: the knee is the lowest load
	}
	d := make([]float64, n)
	for i := range xs {
		d[i] = (ys[i]-ymin)/(ymax-ymin) - (xs[i]-xmin)/(xmax-xmin)
	}
	threshold := KneedleSensitivity / float64(n-1) // mean step of the normalised x
	for i := 1; i < n-1; i++ {
		if d[i] < d[i-1] || d[i] < d[i+1] || d[i] <= 0 {
			continue
		}
		for j := i + 1; j < n; j++ {
			if j < n-1 && d[j] >= d[j-1] && d[j] >= d[j+1] && d[j] > d[i] {
				break // a higher local maximum comes first: look there instead
			}
			if d[j] < d[i]-threshold {
				return i, true
			}
		}
	}
	// Short sweeps rarely fall a whole x-step below the maximum; accept the highest point
	// of the difference curve when throughput had already saturated there.
	best := 0
	for i := 1; i < n-1; i++ {
		if d[i] > d[best] {
			best = i
		}
	}
	if best > 0 && d[best] > 0 && ys[best] >= SaturationShare*ymax {
		return best, true
	}
	return 0, false
}
