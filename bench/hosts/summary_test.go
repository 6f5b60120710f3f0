package main

import (
	"math"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// A step's rate is its operations over its whole window; its CPU per operation is the
// nodes' groups' cores over the window per operation, and absent (not 0) without them.
func TestStepFigures(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st := &result.Step{Window: result.Window{Start: start, End: start.Add(4 * time.Second)},
		Ops:      map[string]*result.Op{"query": {Count: 300, Errors: 7}, "gone": nil},
		Counters: map[string]float64{"host.primary.cpu_cores": 0.5, "host.standby1.cpu_cores": 0.25, "host.primary.cpu_budget": 9}}
	f, ok := stepFigures(st)
	if !ok || f.rate != 75 || f.cpu == nil || math.Abs(*f.cpu-0.01) > 1e-12 {
		t.Fatalf("figures %+v %v, want 75/s and 0.01 CPU s per operation", f, ok)
	}
	st.Counters = nil
	if f, ok := stepFigures(st); !ok || f.cpu != nil {
		t.Errorf("without the groups' counters: %+v, want CPU absent", f)
	}
	st.Ops = map[string]*result.Op{"query": {Errors: 3}}
	if _, ok := stepFigures(st); ok {
		t.Error("a step without a successful operation has figures")
	}
}

func TestSpreadAndIndexLine(t *testing.T) {
	if _, _, ok := spread([]float64{1, 2}); ok {
		t.Error("two rounds have a spread")
	}
	if lo, hi, ok := spread([]float64{5, 1, 3}); !ok || lo != 1 || hi != 5 {
		t.Errorf("spread %v %v %v, want 1 5", lo, hi, ok)
	}
	text := "cluster: x\nnot hosts: y\nhosts: each node\nNODE\n"
	if i := indexLine(text, "hosts:"); i < 0 || text[i:] != "hosts: each node\nNODE\n" {
		t.Errorf("indexLine %d", i)
	}
	if indexLine("hosts: at the start", "hosts:") != 0 || indexLine("none", "hosts:") != -1 {
		t.Error("indexLine at the start or absent")
	}
}
