package sample

import (
	"bytes"
	"fmt"
	"strconv"
)

// PressureTotals are the cumulative stall times of one /proc/pressure file, in microseconds:
// Some is time at least one task stalled on the resource, Full time all non-idle tasks did.
type PressureTotals struct {
	Some, Full uint64
	HasFull    bool
}

// ParsePressure parses a /proc/pressure/{cpu,io,memory} file (PSI, Linux 4.20+), keeping
// the cumulative totals; the kernel's own averages are not needed when we take deltas.
func ParsePressure(data []byte) (PressureTotals, error) {
	var p PressureTotals
	seen := false
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		f := bytes.Fields(line)
		if len(f) == 0 {
			continue
		}
		var total uint64
		ok := false
		for _, kv := range f[1:] {
			k, v, found := bytes.Cut(kv, []byte{'='})
			if !found {
				return p, fmt.Errorf("pressure: %q is not key=value", kv)
			}
			if string(k) == "total" {
				n, err := strconv.ParseUint(string(v), 10, 64)
				if err != nil {
					return p, fmt.Errorf("pressure: total %q is not a counter", v)
				}
				total, ok = n, true
			}
		}
		if !ok {
			return p, fmt.Errorf("pressure: line %q has no total", line)
		}
		switch string(f[0]) {
		case "some":
			p.Some, seen = total, true
		case "full":
			p.Full, p.HasFull = total, true
		default:
			return p, fmt.Errorf("pressure: unknown line kind %q", f[0])
		}
	}
	if !seen {
		return p, fmt.Errorf("pressure: no \"some\" line")
	}
	return p, nil
}

// PressureShares are the shares (0..1) of an interval in which tasks stalled on a resource.
type PressureShares struct {
	Some float64 `json:"some"`
	Full float64 `json:"full"`
}

// PressureDelta turns two readings, seconds apart, into stall shares of the interval.
func PressureDelta(prev, cur PressureTotals, seconds float64) PressureShares {
	if seconds <= 0 {
		return PressureShares{}
	}
	us := seconds * 1e6
	return PressureShares{
		Some: min(float64(sub(cur.Some, prev.Some))/us, 1),
		Full: min(float64(sub(cur.Full, prev.Full))/us, 1),
	}
}
