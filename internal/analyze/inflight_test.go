package analyze

import "testing"

// An operation left running at the window's end is judged when it ran far longer than the
// completed ones, and not in steps whose users think between operations.
func TestInFlight(t *testing.T) {
	for _, c := range []struct {
		s    Step
		want bool
	}{
		{Step{Load: 2, InFlight: 1, InFlightOldestSec: 4.6, P99Ms: 9.5}, true},
		{Step{Load: 2, InFlight: 2, InFlightOldestSec: 0.01, P99Ms: 9.5}, false}, // the usual: busy at the end
		{Step{Load: 2, InFlight: 1, InFlightOldestSec: 4.6, P99Ms: 900}, false},  // long operations
		{Step{Load: 2, InFlight: 1, InFlightOldestSec: 12, P99Ms: 9.5, ThinkMs: 12000}, false},
	} {
		if v := inFlight([]Step{c.s}, "VUs"); (v != nil) != c.want {
			t.Errorf("%+v: verdict %+v, want fired %v", c.s, v, c.want)
		}
	}
}
