package result

import "testing"

// A step's load in words: VUs of a whole run by their knob; a segment's share of the whole
// run's; terminals over the pool's sessions, also in a result of an older agbench whose
// pool was its "vus" param; never a VU count for a step of terminals.
func TestLoadOf(t *testing.T) {
	terminals := func(params map[string]string, vus, terms, sessions int) *Step {
		st := &Step{Params: params, VUs: vus}
		if err := st.SetExtra(ExtraTerminals, TerminalsStep{Terminals: terms, Sessions: sessions, Warehouses: 3}); err != nil {
			t.Fatal(err)
		}
		return st
	}
	seg := &Segment{Index: 1, Of: 3, Run: "r"}
	for _, c := range []struct {
		name        string
		st          *Step
		seg         *Segment
		words, cell string
		head        string
		concurrency int
	}{
		{"threads", &Step{Params: map[string]string{"threads": "8"}, VUs: 8}, nil, "8 threads", "8", "threads", 8},
		{"segment", &Step{Params: map[string]string{"threads": "8", "routing": "on"}, VUs: 3}, seg, "segment 1/3: 3 of 8 threads", "3 of 8", "threads", 3},
		{"terminals", terminals(map[string]string{SessionsKnob: "3", TerminalsKnob: "30"}, 0, 30, 3), nil,
			"30 terminals over 3 sessions", "30/3", "terminals/sessions", 3},
		{"terminals segment", terminals(map[string]string{SessionsKnob: "3", TerminalsKnob: "30"}, 0, 10, 1), seg,
			"segment 1/3: 10 of 30 terminals over 1 of 3 sessions", "10 of 30/1 of 3", "terminals/sessions", 1},
		{"older terminals", terminals(map[string]string{"vus": "3"}, 3, 30, 3), nil, "30 terminals over 3 sessions", "30/3", "terminals/sessions", 3},
	} {
		l := LoadOf(c.st, c.seg, "threads", "threads")
		if l.String() != c.words || l.Cell() != c.cell || l.Head() != c.head || c.st.Concurrency() != c.concurrency {
			t.Errorf("%s: %q, cell %q under %q, concurrency %d; want %q, %q under %q, %d",
				c.name, l, l.Cell(), l.Head(), c.st.Concurrency(), c.words, c.cell, c.head, c.concurrency)
		}
	}
}
