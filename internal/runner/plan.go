package runner

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/agbench/agbench/internal/agerr"
)

// Axis is one knob given as a list: one step per value ("threads" = 1,2,4,8).
type Axis struct {
	Name   string
	Values []string
}

// Variant is the name a step of the axis's i-th value carries ("routing=off").
func (a *Axis) Variant(i int) string { return a.Name + "=" + a.Values[i] }

// Variants are the names of all its values' steps, in order; none for no axis (no --compare).
func (a *Axis) Variants() []string {
	if a == nil {
		return nil
	}
	out := make([]string, len(a.Values))
	for i := range a.Values {
		out[i] = a.Variant(i)
	}
	return out
}

// Sweep is what a command line asks for: knobs swept over lists, an optional comparison of
// variants run at every step, and repeats.
type Sweep struct {
	// Axes are swept as a cartesian product, the first axis outermost.
	Axes []Axis
	// Compare, when set, runs every variant at every point of the sweep, interleaved.
	Compare *Axis
	// Repeat runs each point × variant this many times (at least 1). With more than one
	// repeat the order of the variants inside each repeat is shuffled from Seed, so that
	// drift does not favour one side.
	Repeat int
	Seed   int64
}

// Point is one step of a plan: a point of the sweep, a variant and a repeat.
type Point struct {
	// Index is the step's position in the order of execution.
	Index int
	// Point is the position in the sweep; Variant the index into Compare.Values (0 when
	// nothing is compared); Repeat the repeat's number.
	Point, Variant, Repeat int
	// VariantName is "key=value" of the compared variant, "" when nothing is compared.
	VariantName string
	// Params maps every axis's (and the comparison's) name to this step's value.
	Params map[string]string
}

// Plan returns the steps of the sweep in the order they run: for each point, for each
// repeat, every variant (a1 b1 a2 b2 ... with one repeat).
func (s Sweep) Plan() []Point {
	repeat := max(s.Repeat, 1)
	rng := rand.New(rand.NewPCG(uint64(s.Seed), 0x5eed))
	var plan []Point
	for pi, params := range product(s.Axes) {
		for r := 0; r < repeat; r++ {
			order := []int{0}
			if s.Compare != nil {
				order = make([]int, len(s.Compare.Values))
				for i := range order {
					order[i] = i
				}
				if repeat > 1 {
					rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
				}
			}
			for _, v := range order {
				p := Point{Index: len(plan), Point: pi, Variant: v, Repeat: r, Params: copyParams(params)}
				if s.Compare != nil {
					p.Params[s.Compare.Name] = s.Compare.Values[v]
					p.VariantName = s.Compare.Variant(v)
				}
				plan = append(plan, p)
			}
		}
	}
	return plan
}

// product returns the cartesian product of the axes, first axis outermost; no axes give
// one empty point.
func product(axes []Axis) []map[string]string {
	out := []map[string]string{{}}
	for _, a := range axes {
		var next []map[string]string
		for _, p := range out {
			for _, v := range a.Values {
				q := copyParams(p)
				q[a.Name] = v
				next = append(next, q)
			}
		}
		out = next
	}
	return out
}

func copyParams(p map[string]string) map[string]string {
	q := make(map[string]string, len(p)+1)
	for k, v := range p {
		q[k] = v
	}
	return q
}

// ParseList splits a flag's comma-separated list; an empty element is bad input naming the flag.
func ParseList(flag, s string) ([]string, error) {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
		if parts[i] == "" {
			return nil, agerr.BadInputf("%s %q: element %d of the list is empty", flag, s, i+1)
		}
	}
	return parts, nil
}

// ParseInts parses a flag's comma-separated list of integers, each at least min.
func ParseInts(flag, s string, min int) ([]int, error) {
	parts, err := ParseList(flag, s)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < min {
			return nil, agerr.BadInputf("%s %q: %q is not a whole number of at least %d", flag, s, p, min)
		}
		out[i] = n
	}
	return out, nil
}

// ParseCompare parses --compare key=a,b[,c...]: a knob and at least two distinct values.
func ParseCompare(s string) (*Axis, error) {
	key, vals, ok := strings.Cut(s, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		return nil, agerr.BadInputf("--compare %q: want key=value,value (e.g. routing=off,on)", s)
	}
	values, err := ParseList("--compare "+key, vals)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, v := range values {
		if seen[v] {
			return nil, agerr.BadInputf("--compare %q: %q given twice", s, v)
		}
		seen[v] = true
	}
	if len(values) < 2 {
		return nil, agerr.BadInputf("--compare %q: a comparison needs at least two values", s)
	}
	return &Axis{Name: key, Values: values}, nil
}

// String shows a point as "threads=4 routing=on #2".
func (p Point) String() string {
	var b strings.Builder
	for _, k := range sortedKeys(p.Params) {
		fmt.Fprintf(&b, "%s=%s ", k, p.Params[k])
	}
	fmt.Fprintf(&b, "#%d", p.Repeat+1)
	return b.String()
}
