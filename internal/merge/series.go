package merge

import (
	"math"
	"sort"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// alignSeries sums the parts' per-second series of each name, point by point aligned by
// time: a point goes to the whole second after the earliest part's start nearest to it (the
// segments began within a barrier's lead of each other, their ticks a second apart).
func alignSeries(parts []*result.Step, of func(*result.Step) map[string]result.TimeSeries) map[string]result.TimeSeries {
	names := map[string]bool{}
	for _, p := range parts {
		for name := range of(p) {
			names[name] = true
		}
	}
	if len(names) == 0 {
		return nil
	}
	out := make(map[string]result.TimeSeries, len(names))
	for name := range names {
		var start time.Time
		var unit string
		for _, p := range parts {
			if s, ok := of(p)[name]; ok {
				start = earliest(start, s.Start)
				if unit == "" {
					unit = s.Unit
				}
			}
		}
		sums := map[int64]float64{}
		for _, p := range parts {
			s, ok := of(p)[name]
			if !ok {
				continue
			}
			shift := s.Start.Sub(start).Seconds()
			for i, t := range s.T {
				if i < len(s.V) {
					sums[int64(math.Round(t+shift))] += s.V[i]
				}
			}
		}
		keys := make([]int64, 0, len(sums))
		for k := range sums {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
		ts := result.TimeSeries{Unit: unit, Start: start, T: make([]float64, len(keys)), V: make([]float64, len(keys))}
		for i, k := range keys {
			ts.T[i], ts.V[i] = float64(k), sums[k]
		}
		out[name] = ts
	}
	return out
}
