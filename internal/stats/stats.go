// Package stats owns the statistics of a list of float64 figures that agbench's tables,
// analyses and scripts take: the mean, the median and linearly interpolated quantiles.
//
// Imports from agbench: none.
package stats

import "slices"

// Mean returns the arithmetic mean of xs, or 0 for none.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Median returns the middle value of xs (the mean of the two middle ones for an even
// count), or 0 for none. xs is not changed.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// Quantile returns the q-quantile (q from 0 to 1) of xs by linear interpolation between
// the two nearest ranks, or 0 for none. xs is not changed.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	i := int(pos)
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[i] + (pos-float64(i))*(s[i+1]-s[i])
}
