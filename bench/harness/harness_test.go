package harness

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestRotate(t *testing.T) {
	sides := []string{"a", "b", "c"}
	for k, want := range [][]string{{"a", "b", "c"}, {"b", "c", "a"}, {"c", "a", "b"}, {"a", "b", "c"}} {
		if got := Rotate(sides, k); !slices.Equal(got, want) {
			t.Errorf("round %d: %v, want %v", k, got, want)
		}
	}
	if !slices.Equal(sides, []string{"a", "b", "c"}) {
		t.Errorf("Rotate changed its input: %v", sides)
	}
	// Two sides swap every round: each goes first in half the rounds.
	first := map[string]int{}
	for k := 0; k < 6; k++ {
		first[Rotate([]string{"fio", "agbench"}, k)[0]]++
	}
	if first["fio"] != 3 || first["agbench"] != 3 {
		t.Errorf("first in 6 rounds: %v", first)
	}
}

func TestMedianAndRoundRatio(t *testing.T) {
	type s struct{ tps float64 }
	a := []s{{110}, {90}, {300}}
	b := []s{{100}, {100}, {100}}
	tps := func(x s) float64 { return x.tps }
	if m := Median(a, tps); m != 110 {
		t.Errorf("median %v, want 110", m)
	}
	// Ratios 1.1, 0.9, 3: their median, not the ratio of the medians (1.1).
	r, err := RoundRatio(a, []s{{100}, {50}, {150}}, tps)
	if err != nil || math.Abs(r-1.8) > 1e-9 {
		t.Errorf("round ratio %v %v, want 1.8", r, err)
	}
	if _, err := RoundRatio(a, b[:2], tps); err == nil {
		t.Error("rounds of unequal count gave a ratio")
	}
}

func TestMachineNamesTheFacts(t *testing.T) {
	m := Machine()
	for _, want := range []string{" cores", "load average "} {
		if !strings.Contains(m, want) {
			t.Errorf("%q lacks %q", m, want)
		}
	}
}
