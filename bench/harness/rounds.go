package harness

import (
	"fmt"

	"github.com/agbench/agbench/internal/stats"
)

// Rotate returns sides in the order they run in round k: rotated left by k, so that over
// the rounds each side goes first as often as the others and a machine that drifts within a
// round favours none of them. sides is not changed.
func Rotate[T any](sides []T, k int) []T {
	n := len(sides)
	out := make([]T, 0, n)
	for i := range sides {
		out = append(out, sides[((i+k)%n+n)%n])
	}
	return out
}

// Median is the median of one figure of the samples.
func Median[T any](samples []T, figure func(T) float64) float64 {
	v := make([]float64, len(samples))
	for i, s := range samples {
		v[i] = figure(s)
	}
	return stats.Median(v)
}

// RoundRatio is the median of the per-round ratios of one figure, a[i]/b[i] for each round
// i. A machine shared with other work drifts between rounds by more than the tools differ,
// while the two sides of a round ran back to back: the verdicts rest on this ratio.
func RoundRatio[T any](a, b []T, figure func(T) float64) (float64, error) {
	if len(a) != len(b) {
		return 0, fmt.Errorf("%d rounds against %d: no per-round ratio", len(a), len(b))
	}
	v := make([]float64, len(a))
	for i := range a {
		v[i] = figure(a[i]) / figure(b[i])
	}
	return stats.Median(v), nil
}

// Met is the word a verdict line ends in.
func Met(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}
