package tpcc

import (
	"strings"
	"testing"
)

func TestDisagreements(t *testing.T) {
	ok := map[string]float64{CounterNOPM: 10000, CounterServerNOPM: 10100, CounterPrimaryTPM: 22000, CounterServerTPM: 22400}
	if w := Disagreements(ok, 300); len(w) != 0 {
		t.Fatalf("agreeing counts warned: %v", w)
	}
	// 10% apart: beyond the tolerance of a 5-minute window (2.3%), within that of a 10 s one
	// (12%: one statistics flush interval is a tenth of the window).
	apart := map[string]float64{CounterPrimaryTPM: 20000, CounterServerTPM: 22222}
	if w := Disagreements(apart, 300); len(w) != 1 || !strings.Contains(w[0], "tolerance 2% over a 300 s window") {
		t.Fatalf("10%% apart over 300 s: %v", w)
	}
	if w := Disagreements(apart, 10); len(w) != 0 {
		t.Fatalf("10%% apart over 10 s warned: %v", w)
	}
	bad := map[string]float64{CounterNOPM: 10000, CounterServerNOPM: 8000, CounterPrimaryTPM: 50000, CounterServerTPM: 40000}
	w := Disagreements(bad, 60)
	if len(w) != 2 || !strings.Contains(w[0], "NOPM") || !strings.Contains(w[1], "TPM") {
		t.Fatalf("disagreeing counts: %v", w)
	}
	// Absent server figures are not compared (absent is not zero: 8,000 vs absent is no
	// "100% apart").
	if w := Disagreements(map[string]float64{CounterNOPM: 8000, CounterPrimaryTPM: 50000}, 60); len(w) != 0 {
		t.Fatalf("absent server figures compared: %v", w)
	}
	if w := Disagreements(map[string]float64{}, 60); len(w) != 0 {
		t.Fatalf("empty counters warned: %v", w)
	}
}
