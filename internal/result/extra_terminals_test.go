package result

import (
	"math"
	"strings"
	"testing"
)

func TestTerminalRules(t *testing.T) {
	cases := []struct {
		ts      TerminalsStep
		holds   bool
		bound   float64
		outside []string
	}{
		{TerminalsStep{Terminals: 1000, Warehouses: 100, ThinkScale: 1}, true, 12.86, nil},
		{TerminalsStep{Terminals: 10000, Warehouses: 100, ThinkScale: 1}, false, 128.6, []string{"10000 terminals on 100 warehouses, not the 1000"}},
		{TerminalsStep{Terminals: 1000, Warehouses: 100, ThinkScale: 0.1}, false, 128.6, []string{"scaled by 0.1"}},
		{TerminalsStep{Terminals: 5, Warehouses: 1, ThinkScale: 0.5}, false, 12.86, []string{"5 terminals on 1 warehouses", "scaled by 0.5"}},
		// A segment's share of 30 terminals on 3 warehouses: its 10 on its own one.
		{TerminalsStep{Terminals: 10, Warehouses: 3, SegmentWarehouses: 1, ThinkScale: 1}, true, 12.86, nil},
		{TerminalsStep{Terminals: 10, Warehouses: 4, SegmentWarehouses: 2, ThinkScale: 1}, false, 6.43, []string{"10 terminals on 2 warehouses, not the 20"}},
	}
	for _, c := range cases {
		if got := c.ts.TerminalRuleHolds(); got != c.holds {
			t.Errorf("%+v: rule holds %v, want %v", c.ts, got, c.holds)
		}
		if got := c.ts.TpmCBound(); math.Abs(got-c.bound) > 1e-9 {
			t.Errorf("%+v: bound %v, want %v", c.ts, got, c.bound)
		}
		why := c.ts.OutsideSpec()
		if (why == "") != (len(c.outside) == 0) {
			t.Errorf("%+v: outside %q", c.ts, why)
		}
		for _, w := range c.outside {
			if !strings.Contains(why, w) {
				t.Errorf("%+v: outside %q lacks %q", c.ts, why, w)
			}
		}
	}
	if (TerminalsStep{}).TpmCBound() != 0 {
		t.Error("a bound without warehouses")
	}
}

func TestTerminalsSectionDecodes(t *testing.T) {
	st := &Step{Index: 2}
	if ts, err := st.Terminals(); ts != nil || err != nil {
		t.Fatalf("absent section: %v, %v", ts, err)
	}
	if err := st.SetExtra(ExtraTerminals, TerminalsStep{Terminals: 7, Sessions: 2}); err != nil {
		t.Fatal(err)
	}
	if ts, err := st.Terminals(); err != nil || ts.Terminals != 7 || ts.Sessions != 2 {
		t.Fatalf("section %+v, %v", ts, err)
	}
	st.Extra[ExtraTerminals] = []byte(`{"terminals":"many"}`)
	r := &Result{Steps: []Step{*st}}
	if err := r.CheckExtras(); err == nil || !strings.Contains(err.Error(), ExtraTerminals) {
		t.Fatalf("undecodable section: %v", err)
	}
}
