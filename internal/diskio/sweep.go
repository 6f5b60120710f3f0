package diskio

import (
	"strconv"
	"strings"

	"github.com/agbench/agbench/internal/agerr"
)

// ParseSweep reads "qd=1,2,4,8" or "threads=1,10,20,40".
func ParseSweep(s string) (*Sweep, error) {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(strings.ToLower(k))
	if !ok || (k != "qd" && k != "threads") {
		return nil, agerr.BadInputf("--sweep %q: want qd=1,2,4,... or threads=1,10,20,...", s)
	}
	vals, err := ParseIntList(v, "--sweep "+k, 1, map[string]int{"qd": MaxQD, "threads": MaxThreads}[k])
	if err != nil {
		return nil, err
	}
	return &Sweep{Key: k, Values: vals}, nil
}

// ParseIntList reads "1,2,4" with every value in [lo, hi].
func ParseIntList(s, flag string, lo, hi int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		n, err := strconv.Atoi(f)
		if err != nil || n < lo || n > hi {
			return nil, agerr.BadInputf("%s: %q is not a whole number from %d to %d", flag, f, lo, hi)
		}
		out = append(out, n)
	}
	return out, nil
}
