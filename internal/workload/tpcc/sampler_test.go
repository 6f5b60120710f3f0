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
	if w := Disagreements(map[string]float64{}); len(w) != 0 {
		t.Fatalf("empty counters warned: %v", w)
	}
}

func TestSQLStateCounter(t *testing.T) {
	name := SQLStateCounter("40001")
	if name != "errors_sqlstate_40001" {
		t.Fatalf("SQLStateCounter: %s", name)
	}
	if code, ok := ParseSQLStateCounter(name); !ok || code != "40001" {
		t.Fatalf("ParseSQLStateCounter(%s) = %q %v", name, code, ok)
	}
	for _, other := range []string{CounterNOPM, CounterSQLStatePrefix, "errors_40001", CounterReadOnStandby} {
		if code, ok := ParseSQLStateCounter(other); ok {
			t.Errorf("ParseSQLStateCounter(%s) = %q", other, code)
		}
	}
}
