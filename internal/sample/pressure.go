package sample

import "github.com/agbench/agbench/internal/proc"

// PressureShares are the shares (0..1) of an interval in which tasks stalled on a resource.
type PressureShares struct {
	Some float64 `json:"some"`
	Full float64 `json:"full"`
}

// PressureDelta turns two readings, seconds apart, into stall shares of the interval.
func PressureDelta(prev, cur proc.PressureTotals, seconds float64) PressureShares {
	if seconds <= 0 {
		return PressureShares{}
	}
	us := seconds * 1e6
	return PressureShares{
		Some: min(float64(sub(cur.Some, prev.Some))/us, 1),
		Full: min(float64(sub(cur.Full, prev.Full))/us, 1),
	}
}
