package tpcc

import (
	"strings"
	"testing"
)

func TestDisagreements(t *testing.T) {
	ok := map[string]float64{CounterNOPM: 10000, CounterServerNOPM: 10100, CounterPrimaryTPM: 22000, CounterServerTPM: 22900}
	if w := Disagreements(ok); len(w) != 0 {
		t.Fatalf("agreeing counts warned: %v", w)
	}
	bad := map[string]float64{CounterNOPM: 10000, CounterServerNOPM: 8000, CounterPrimaryTPM: 50000, CounterServerTPM: 40000}
	w := Disagreements(bad)
	if len(w) != 2 || !strings.Contains(w[0], "NOPM") || !strings.Contains(w[1], "TPM") {
		t.Fatalf("disagreeing counts: %v", w)
	}
	// Absent server figures are not compared (absent is not zero: 8,000 vs absent is no
	// "100% apart").
	if w := Disagreements(map[string]float64{CounterNOPM: 8000, CounterPrimaryTPM: 50000}); len(w) != 0 {
		t.Fatalf("absent server figures compared: %v", w)
	}
	if w := Disagreements(map[string]float64{}); len(w) != 0 {
		t.Fatalf("empty counters warned: %v", w)
	}
}
