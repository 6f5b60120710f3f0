// Package segment owns the split of one run's load across several load generators: a
// segment i of N (--segment i/N, or a Kubernetes Indexed Job's completion index with
// --segments N) takes the fractional range [i/N, (i+1)/N) of every countable knob (VUs,
// warehouses) and the operations i, i+N, i+2N … of a fixed-rate schedule, as k6's
// execution segments do, so that any N divides any load exactly: the segments' shares never
// overlap and add up to the whole.
//
// It is a pure value with its parser; it imports nothing of agbench and must not import the
// runner, workloads or experiments (they import it).
//
// Imports from agbench: none.
package segment

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxOf bounds the number of segments: more load generators than this is a typo.
const MaxOf = 10000

// Segment is the i-th of N shares of a run (0-based). The zero value is the whole run.
type Segment struct {
	Index int `json:"index"`
	Of    int `json:"of"`
}

// Whole reports whether the segment is the whole run (no split).
func (s Segment) Whole() bool { return s.Of <= 1 }

// String is "i/N" as --segment takes it; the whole run is "".
func (s Segment) String() string {
	if s.Whole() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Of)
}

// Parse reads "i/N": 0 <= i < N, 1 <= N <= MaxOf. The message names what is wrong, for
// the flag's error.
func Parse(v string) (Segment, error) {
	is, ns, ok := strings.Cut(strings.TrimSpace(v), "/")
	if !ok {
		return Segment{}, fmt.Errorf("want INDEX/SEGMENTS, e.g. 0/3")
	}
	i, err := strconv.Atoi(is)
	if err != nil {
		return Segment{}, fmt.Errorf("index %q is not a whole number", is)
	}
	n, err := strconv.Atoi(ns)
	if err != nil {
		return Segment{}, fmt.Errorf("segments %q is not a whole number", ns)
	}
	return New(i, n)
}

// New checks a segment's index and count.
func New(i, n int) (Segment, error) {
	switch {
	case n < 1 || n > MaxOf:
		return Segment{}, fmt.Errorf("segments %d: must be 1..%d", n, MaxOf)
	case i < 0 || i >= n:
		return Segment{}, fmt.Errorf("index %d out of range: segments of %d are numbered 0..%d", i, n, n-1)
	}
	return Segment{Index: i, Of: n}, nil
}

// Range is the segment's share of n things numbered 0..n-1: [lo, hi). The shares of all
// N segments are consecutive, never overlap and cover 0..n-1; their sizes differ by at most
// one.
func (s Segment) Range(n int) (lo, hi int) {
	if s.Whole() {
		return 0, n
	}
	return s.Index * n / s.Of, (s.Index + 1) * n / s.Of
}

// Count is the size of the segment's share of n things.
func (s Segment) Count(n int) int {
	lo, hi := s.Range(n)
	return hi - lo
}

// Owns reports whether operation k of a schedule shared by the segments (a fixed rate's
// k-th start) is the segment's: the segments take turns.
func (s Segment) Owns(k int64) bool {
	return s.Whole() || k%int64(s.Of) == int64(s.Index)
}

// Rate is the segment's share of a rate: the operations it owns of the shared schedule,
// per second.
func (s Segment) Rate(r float64) float64 {
	if s.Whole() {
		return r
	}
	return r / float64(s.Of)
}

// SettingArgs is a segment's command line less what may differ between the segments of one
// run: which segment it is (--segment) and where it writes its result (--results). The
// segments of one run have equal SettingArgs.
func SettingArgs(args []string) []string {
	out := make([]string, 0, len(args))
	skip := false
	for _, a := range args {
		if skip {
			skip = false
			continue
		}
		switch name, _, eq := strings.Cut(a, "="); name {
		case "--segment", "--results":
			skip = !eq
			continue
		}
		out = append(out, a)
	}
	return out
}
