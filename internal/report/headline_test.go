package report

import (
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/result"
)

// A tpcc-like run whose variants rank apart by ops/s and by NOPM (routing=off twice the
// operations per second, routing=on three times the NOPM): the report's headline,
// `agbench compare` (Compare) and the run's analysis all judge by NOPM and name routing=on.
func TestHeadlineCompareAndAnalysisAgree(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &result.Result{Meta: result.Meta{Command: "tpcc run"}}
	for rep := 0; rep < 3; rep++ {
		for _, v := range []struct {
			name      string
			ops, nopm float64
		}{{"routing=off", 1000, 100}, {"routing=on", 500, 300}} {
			ts := result.TimeSeries{T: []float64{1, 2, 3}, V: []float64{v.ops * 0.99, v.ops, v.ops * 1.01}}
			r.Steps = append(r.Steps, result.Step{Variant: v.name, VUs: 4, Repeat: rep, Complete: true,
				Window:     result.Window{Start: t0, End: t0.Add(3 * time.Second)},
				Ops:        map[string]*result.Op{"new_order": {Count: int64(3 * v.ops)}},
				Throughput: map[string]result.TimeSeries{"*": ts},
				Counters:   map[string]float64{"nopm": v.nopm * (1 + float64(rep)/100)}})
		}
	}
	e := build(t, NewRun("results/x-tpcc-run", r))[0]
	if h := e.Headline(); !strings.Contains(h, "routing=on ahead") || !strings.Contains(h, "NOPM") {
		t.Errorf("headline %q; want routing=on ahead in NOPM", h)
	}
	c := Compare(e, e.Variants[0], e.Variants[1])
	if c.Metric != "NOPM" || len(c.Diffs) != 1 || c.Diffs[0].Difference.Winner != "routing=on" {
		t.Errorf("compare: %+v", c)
	}
	run, err := analyze.FromResult(r, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Differences) != 1 || !strings.Contains(run.Differences[0], "NOPM at 4 VUs: routing=on ahead") {
		t.Errorf("analysis: differences %v, comparisons %+v", run.Differences, run.Comparisons)
	}
}
