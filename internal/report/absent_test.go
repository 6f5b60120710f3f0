package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/result"
)

// listenerStudy is rorStudy where routing=off measured its headline counter (the servers'
// New-Orders per minute) and routing=on, through a listener, could not: an unmeasured
// figure once read as zero there ("-100% MB/s", "peak NOPM 0" when the servers' MB/s was a
// headline).
func listenerStudy(t *testing.T) *result.Result {
	r := rorStudy().result(t)
	for i := range r.Steps {
		if r.Steps[i].Variant == "routing=off" {
			r.Steps[i].Counters["nopm"] = 40 + float64(i)
		}
	}
	return r
}

func TestAbsentFigureIsNeverZero(t *testing.T) {
	e := build(t, NewRun("r", listenerStudy(t)))[0]
	var text []string
	text = append(text, e.Headline())
	for _, k := range e.kpis() {
		text = append(text, k.Label+" "+k.Value+" "+k.Note)
	}
	cmp := Compare(e, e.Variants[0], e.Variants[1])
	var out bytes.Buffer
	if err := WriteText(&out, cmp.Table()); err != nil {
		t.Fatal(err)
	}
	text = append(text, out.String())
	all := strings.Join(text, "\n")
	t.Log(all)
	for _, bad := range []string{"-100", "peak NOPM 0", "peak 0 "} {
		if strings.Contains(all, bad) {
			t.Errorf("an absent figure became %q:\n%s", bad, all)
		}
	}
	if !strings.Contains(all, "not measured in routing=on") {
		t.Errorf("the reason is not given:\n%s", all)
	}
	for _, d := range cmp.Diffs {
		if d.Compared() || d.Absent == "" {
			t.Errorf("%s: compared with an absent side: %+v", d.Point, d)
		}
	}
	// A counter measured on both sides is still compared.
	both := build(t, NewRun("r", rorStudy().result(t)))[0]
	if c := Compare(both, both.Variants[0], both.Variants[1]); !c.Diffs[0].Compared() {
		t.Errorf("measured on both sides but not compared: %+v", c.Diffs[0])
	}
}
