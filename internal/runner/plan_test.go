package runner

import (
	"reflect"
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/agerr"
)

// order renders a plan as "point variant repeat" triples, e.g. "1off 1on 2off 2on".
func order(plan []Point) string {
	var b []string
	for i, p := range plan {
		if p.Index != i {
			return "bad index"
		}
		b = append(b, p.Params["threads"]+p.Params["routing"])
	}
	return strings.Join(b, " ")
}

func TestPlan(t *testing.T) {
	threads := Axis{Name: "threads", Values: []string{"1", "2"}}
	routing := &Axis{Name: "routing", Values: []string{"off", "on"}}
	cases := []struct {
		name  string
		sweep Sweep
		want  string
	}{
		{"sweep only", Sweep{Axes: []Axis{threads}}, "1 2"},
		{"interleaved", Sweep{Axes: []Axis{threads}, Compare: routing}, "1off 1on 2off 2on"},
		{"compare only", Sweep{Compare: routing}, "off on"},
		{"nothing", Sweep{}, ""},
		{"repeat without compare", Sweep{Axes: []Axis{threads}, Repeat: 2}, "1 1 2 2"},
		{"two axes", Sweep{Axes: []Axis{threads, {Name: "routing", Values: []string{"x", "y"}}}}, "1x 1y 2x 2y"},
	}
	for _, c := range cases {
		if got := order(c.sweep.Plan()); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestPlanRepeatShufflesInsideBlocks(t *testing.T) {
	s := Sweep{Axes: []Axis{{Name: "threads", Values: []string{"1", "2", "4"}}},
		Compare: &Axis{Name: "routing", Values: []string{"off", "on"}}, Repeat: 5, Seed: 7}
	plan := s.Plan()
	if len(plan) != 3*5*2 {
		t.Fatalf("%d steps", len(plan))
	}
	if !reflect.DeepEqual(plan, s.Plan()) {
		t.Fatal("the same seed gave another plan")
	}
	firsts := map[string]int{}
	for i := 0; i < len(plan); i += 2 {
		a, b := plan[i], plan[i+1]
		if a.Point != b.Point || a.Repeat != b.Repeat || a.Variant == b.Variant {
			t.Fatalf("block %d is not one repeat of one point with both variants: %+v %+v", i/2, a, b)
		}
		if a.VariantName != "routing="+a.Params["routing"] {
			t.Fatalf("variant name %q", a.VariantName)
		}
		firsts[a.Params["routing"]]++
	}
	if firsts["off"] == 0 || firsts["on"] == 0 {
		t.Fatalf("repeats never reordered the variants: %v", firsts)
	}
	s.Seed = 8
	if reflect.DeepEqual(plan, s.Plan()) {
		t.Fatal("another seed gave the same order")
	}
}

func TestParse(t *testing.T) {
	if got, err := ParseInts("--threads", "1, 2,4", 1); err != nil || !reflect.DeepEqual(got, []int{1, 2, 4}) {
		t.Fatalf("ParseInts: %v %v", got, err)
	}
	bad := []struct {
		f    func() error
		want string
	}{
		{func() error { _, err := ParseInts("--threads", "1,,x", 1); return err }, "--threads \"1,,x\": element 2"},
		{func() error { _, err := ParseInts("--threads", "1,x", 1); return err }, `"x" is not a whole number`},
		{func() error { _, err := ParseInts("--threads", "0", 1); return err }, "at least 1"},
		{func() error { _, err := ParseCompare("routing"); return err }, "want key=value"},
		{func() error { _, err := ParseCompare("routing=on"); return err }, "at least two"},
		{func() error { _, err := ParseCompare("routing=on,on"); return err }, "given twice"},
		{func() error { _, err := ParseCompare("=a,b"); return err }, "want key=value"},
	}
	for _, c := range bad {
		err := c.f()
		if !agerr.IsBadInput(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want bad input containing %q", err, c.want)
		}
	}
	a, err := ParseCompare("routing=off,on")
	if err != nil || a.Name != "routing" || !reflect.DeepEqual(a.Values, []string{"off", "on"}) {
		t.Fatalf("ParseCompare: %+v %v", a, err)
	}
}

func FuzzParseFlags(f *testing.F) {
	f.Add("1,2,4,8")
	f.Add("routing=off,on")
	f.Add("1,,x")
	f.Fuzz(func(t *testing.T, s string) {
		if ns, err := ParseInts("--threads", s, 1); err == nil {
			for _, n := range ns {
				if n < 1 {
					t.Fatalf("%q gave %d", s, n)
				}
			}
		} else if !agerr.IsBadInput(err) {
			t.Fatalf("%q: %v is not bad input", s, err)
		}
		if a, err := ParseCompare(s); err == nil {
			plan := Sweep{Compare: a, Repeat: 2}.Plan()
			if len(plan) != 2*len(a.Values) || len(a.Values) < 2 {
				t.Fatalf("%q: %d steps for %d values", s, len(plan), len(a.Values))
			}
		} else if !agerr.IsBadInput(err) {
			t.Fatalf("%q: %v is not bad input", s, err)
		}
	})
}
