package stats

import (
	"slices"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{-2, -8}, -5},
		{[]float64{1, 1, 1, 9}, 1},
	} {
		in := slices.Clone(c.in)
		if got := Median(in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
		if !slices.Equal(in, c.in) {
			t.Errorf("Median changed its input: %v", in)
		}
	}
}

func TestQuantile(t *testing.T) {
	xs := []float64{40, 10, 30, 20, 50}
	for _, c := range []struct {
		q, want float64
	}{{0, 10}, {0.1, 14}, {0.5, 30}, {0.9, 46}, {1, 50}, {1.5, 50}} {
		if got := Quantile(xs, c.q); got != c.want {
			t.Errorf("Quantile(%v, %v) = %v, want %v", xs, c.q, got, c.want)
		}
	}
	if got := Quantile(nil, 0.5); got != 0 {
		t.Errorf("Quantile(nil) = %v", got)
	}
	if got := Quantile([]float64{7}, 0.9); got != 7 {
		t.Errorf("Quantile of one = %v", got)
	}
	if xs[0] != 40 {
		t.Errorf("Quantile changed its input: %v", xs)
	}
}

func TestMean(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{1, 2, 3, 6}, 3}, {[]float64{-1, 1}, 0}} {
		if got := Mean(c.xs); got != c.want {
			t.Errorf("Mean(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
}
