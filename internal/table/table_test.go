package table

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
)

func step(point int, threads, variant string, repeat int, secs float64, complete bool) result.Step {
	t0 := time.Unix(0, 0)
	return result.Step{Point: point, Variant: variant, Repeat: repeat, Params: map[string]string{"threads": threads},
		Window: result.Window{Start: t0, End: t0.Add(time.Duration(secs * float64(time.Second)))}, Complete: complete,
		Sessions: []result.Sessions{{Node: "n-" + variant, InRecovery: variant == "routing=on", Count: 1}}}
}

func TestWriteFoldsRepeatsIntoMedians(t *testing.T) {
	r := &result.Result{Steps: []result.Step{
		step(0, "1", "routing=off", 0, 1, true), step(0, "1", "routing=on", 0, 2, true),
		step(0, "1", "routing=off", 1, 3, true), step(0, "1", "routing=on", 1, 4, true),
		step(0, "1", "routing=off", 2, 10, true), step(0, "1", "routing=on", 2, 6, false),
		step(1, "8", "routing=off", 0, 5, true),
	}}
	var b bytes.Buffer
	cols := []Column{{Header: "time (s)", Format: "%.1f", Value: func(s *result.Step) (float64, bool) { return s.Window.Seconds(), true }}}
	if err := Write(&b, r, "threads", cols); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("table:\n%s", b.String())
	}
	if f := strings.Fields(lines[0]); strings.Join(f, " ") != "routing=off routing=on" {
		t.Errorf("variant header %q", lines[0])
	}
	if f := strings.Fields(lines[2]); strings.Join(f, " ") != "1 3.0 4.0*" {
		t.Errorf("row 1 %q: want medians 3.0 and 4.0 marked incomplete", lines[2])
	}
	if f := strings.Fields(lines[3]); strings.Join(f, " ") != "8 5.0 –" {
		t.Errorf("row 2 %q", lines[3])
	}
	landed := Landed(r)
	if len(landed) != 2 || landed[0] != "routing=off: n-routing=off (primary) 4" || landed[1] != "routing=on: n-routing=on (standby) 3" {
		t.Errorf("landed %q", landed)
	}
}

// Where sessions landed names, with every session made, the operations run on each node
// where the result placed them all (a failover: the old primary's and the new one's), and
// leaves them out where it did not (a worker of two sessions, or an older result).
func TestLandedWithOperations(t *testing.T) {
	ops := func(n int64) *int64 { return &n }
	r := &result.Result{Steps: []result.Step{
		{Sessions: []result.Sessions{{Node: "old", Count: 2, Ops: ops(1435)}, {Node: "new", Count: 2, Ops: ops(1765)}, {Node: "s1", InRecovery: true, Count: 2}}},
	}}
	want := "sessions: old (primary) 2 (1,435 ops), new (primary) 2 (1,765 ops), s1 (standby) 2"
	if got := Landed(r); len(got) != 1 || got[0] != want {
		t.Errorf("landed %q, want %q", got, want)
	}
}

// A segment's table gives each step's load as its share of the whole run's, not the whole's.
func TestWriteSaysASegmentsShare(t *testing.T) {
	r := &result.Result{Meta: result.Meta{Segment: &result.Segment{Index: 1, Of: 3}}, Steps: []result.Step{
		{Point: 0, Params: map[string]string{"threads": "8"}, VUs: 3, Complete: true},
		{Point: 1, Params: map[string]string{"threads": "2"}, VUs: 1, Complete: true},
	}}
	var b strings.Builder
	if err := Write(&b, r, "threads", []Column{{Header: "vus", Format: "%.0f", Value: func(s *result.Step) (float64, bool) { return float64(s.VUs), true }}}); err != nil {
		t.Fatal(err)
	}
	want := "  threads  vus\n   3 of 8    3\n   1 of 2    1\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}
