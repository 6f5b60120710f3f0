package analyze

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/result"
)

// sweepWithEvidence is an 8-server closed system (knee at 8) whose evidence at loads ≥ 8
// is hot(e) and at lower loads calm.
func sweepWithEvidence(hot func(*Evidence)) ([]Step, []Evidence) {
	steps := mmcSweep([]int{1, 2, 4, 8, 16, 32, 64}, 8, 1000, 0)
	var ev []Evidence
	for _, s := range steps {
		e := Evidence{Load: s.Load, CPUBusy: 0.2, LoadGenCores: 0.05, LoadGenShare: 0.02,
			Device: Device{Name: "vda", ReadMBps: 5, WriteMBps: 5, AwaitMs: 0.3, Queue: 0.5, Util: 0.2},
			Waits:  Waits{CPU: s.Load * 0.7, Log: s.Load * 0.1, Client: s.Load * 0.2}, Standby: "node2", ReplayLagSec: 0.01}
		if s.Load >= 8 {
			hot(&e)
		}
		ev = append(ev, e)
	}
	return steps, ev
}

func TestWhatSaturated(t *testing.T) {
	cases := []struct {
		name string
		hot  func(*Evidence)
		res  string
		want []string
	}{
		{"log", func(e *Evidence) {
			e.Waits = Waits{CPU: 3, Log: 10, Client: 1}
			e.TopWaits = []result.WaitEvent{{Type: "Lock", Event: "tuple", Class: "lock", Sessions: 11}, {Type: "IO", Event: "WALSync", Class: "log", Sessions: 6}, {Type: "LWLock", Event: "WALWrite", Class: "log", Sessions: 4}}
			e.Device.AwaitMs, e.Device.Queue = 4.1, 6
		}, ResLog, []string{"At 8 VUs and beyond, log saturated", "WAL write/sync waits (mostly IO:WALSync) were 71%", "(10% at 1 VU)", "await 4.10 ms"}},
		{"data reads", func(e *Evidence) { e.Waits = Waits{CPU: 2, DataRead: 12, Log: 1} }, ResDataRead, []string{"DataFileRead waits were 80%"}},
		{"locks", func(e *Evidence) { e.Waits = Waits{CPU: 2, Lock: 6, Client: 2} }, ResLocks, []string{"lock waits were 60%"}},
		{"client", func(e *Evidence) { e.Waits = Waits{CPU: 1, Client: 7} }, ResClient, []string{"client waits were 88%"}},
		{"sync standby", func(e *Evidence) { e.Waits = Waits{CPU: 1, SyncRep: 7} }, ResSyncRep, []string{"SyncRep waits"}},
		{"database CPU", func(e *Evidence) { e.Waits = Waits{CPU: 9, Log: 1}; e.CPUBusy = 0.98 }, ResCPU, []string{"machine CPU 98% busy", "90% of sampled sessions on CPU"}},
		{"load generator", func(e *Evidence) {
			e.Waits = Waits{CPU: 3, Client: 5}
			e.CPUBusy, e.LoadGenShare, e.LoadGenCores = 0.99, 0.6, 1.2
		}, ResLoadGen, []string{"1.2 cores"}},
		{"device", func(e *Evidence) { e.Waits = Waits{}; e.Device.Util, e.Device.AwaitMs, e.Device.Queue = 0.97, 3.2, 31 }, ResDevice, []string{"device vda 97% busy", "queue 31.0"}},
		{"replica", func(e *Evidence) { e.Waits = Waits{}; e.LagGrowth, e.ReplayLagSec = 0.4, 12 }, ResReplica, []string{"standby node2", "12.0 s"}},
		{"nothing", func(e *Evidence) {}, ResNone, []string{"no layer measured as saturated"}},
	}
	for _, c := range cases {
		steps, ev := sweepWithEvidence(c.hot)
		k := FindKnee(steps, nil)
		s := WhatSaturated(k, ev, "VUs")
		if s.Resource != c.res {
			t.Errorf("%s: resource %q, want %q (%s)", c.name, s.Resource, c.res, s.Sentence)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(s.Sentence, w) {
				t.Errorf("%s: %q lacks %q", c.name, s.Sentence, w)
			}
		}
		if strings.Count(s.Sentence, ".") > 8 || !strings.HasSuffix(s.Sentence, ".") {
			t.Errorf("%s: not one sentence: %q", c.name, s.Sentence)
		}
	}
}

func TestWhatSaturatedMentionsLaggingStandby(t *testing.T) {
	steps, ev := sweepWithEvidence(func(e *Evidence) { e.Waits = Waits{CPU: 1, Log: 9}; e.LagGrowth, e.ReplayLagSec = 0.2, 5 })
	s := WhatSaturated(FindKnee(steps, nil), ev, "VUs")
	if s.Resource != ResLog || !strings.Contains(s.Sentence, "meanwhile standby node2 fell behind") {
		t.Errorf("%+v", s)
	}
}

// A lag the samplers could not measure is not judged, never a standby keeping up.
func TestWhatSaturatedLagNotMeasured(t *testing.T) {
	why := "replication lag not measured on node1: the login app lacks pg_read_all_stats"
	steps, ev := sweepWithEvidence(func(e *Evidence) {
		e.Waits = Waits{CPU: 1, Log: 9}
		e.Standby, e.ReplayLagSec, e.LagGrowth, e.LagAbsent = "", 0, 0, why
	})
	s := WhatSaturated(FindKnee(steps, nil), ev, "VUs")
	if s.Resource != ResLog || !strings.Contains(s.Sentence, "whether a standby fell behind was not judged: "+why) {
		t.Errorf("%+v", s)
	}
}

// A CPU and a device no sampler measured are said so, not "0% busy".
func TestWhatSaturatedUnmeasuredCPU(t *testing.T) {
	steps, ev := sweepWithEvidence(func(e *Evidence) { e.CPUBusy, e.CPUAbsent, e.Device = 0, true, Device{} })
	for i := range ev {
		ev[i].CPUBusy, ev[i].CPUAbsent, ev[i].Device = 0, true, Device{}
	}
	s := WhatSaturated(FindKnee(steps, nil), ev, "VUs")
	if strings.Contains(s.Sentence, "0% busy") || !strings.Contains(s.Sentence, "CPU not measured, no device measured") {
		t.Errorf("%+v", s)
	}
}

func TestWhatSaturatedWithoutEvidence(t *testing.T) {
	steps, _ := sweepWithEvidence(func(*Evidence) {})
	if s := WhatSaturated(FindKnee(steps, nil), nil, "VUs"); s.Resource != ResNone || !strings.Contains(s.Sentence, "not known") {
		t.Errorf("%+v", s)
	}
	rising := uslSweep([]float64{1, 2, 4, 8}, 100, 0, 0)
	ev := []Evidence{{Load: 1, CPUBusy: 0.1}, {Load: 8, CPUBusy: 0.3}}
	if s := WhatSaturated(FindKnee(rising, nil), ev, "VUs"); !strings.Contains(s.Sentence, "still rising at 8 VUs (no knee reached) and no layer measured as saturated") {
		t.Errorf("rising sweep: %+v", s)
	}
	ev[1].CPUBusy = 0.95
	if s := WhatSaturated(FindKnee(rising, nil), ev, "VUs"); s.Resource != ResCPU || !strings.Contains(s.Sentence, "the busiest layer there was the CPU: machine CPU 95% busy") {
		t.Errorf("rising sweep, busy CPU: %+v", s)
	}
}

func TestAnalyzeAndWriteText(t *testing.T) {
	steps, ev := sweepWithEvidence(func(e *Evidence) { e.Waits = Waits{CPU: 3, Log: 10}; e.Device.AwaitMs = 4 })
	slos, _ := ParseSLOs("p99<5ms")
	steps[0].WindowSec = 10
	a := Analyze(Input{LoadName: "VUs", Unit: "tx/s", Steps: steps, Evidence: ev, SLOs: slos,
		Facts: Facts{DatasetBytes: 100 << 20, SharedBuffersBytes: 128 << 20}})
	var b bytes.Buffer
	if err := a.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, w := range []string{
		"knee: characteristic latency 1 ms at 1 VU ·",
		"knee 8 VUs (8,000 tx/s",
		"saturation 8 VUs (≥90% of peak 8,000 tx/s at 8)",
		"SLO p99<5ms: met up to 8 VUs (8,000 tx/s)",
		"saturated: At 8 VUs and beyond, log saturated",
		"! fits-in-memory: the dataset (100.0 MiB)",
		"! window-short:",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if a.USL != nil {
		t.Errorf("USL shown for a hard-capped M/M/c curve: %+v", a.USL)
	}
	u := Analyze(Input{Steps: uslSweep(floats(doubling), 1000, 0.05, 0.001)})
	b.Reset()
	_ = u.WriteText(&b)
	if !strings.Contains(b.String(), "USL: σ=0.05 κ=0.001") || !strings.Contains(b.String(), "validity: no problem found") {
		t.Errorf("USL sweep output:\n%s", b.String())
	}
}

// With one step only, the hot windows are the lowest load's own: the sentence does not
// compare the step with itself.
func TestWhatSaturatedOneStepComparesNothing(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	steps := mmcSweep([]int{2}, 8, 1000, 0)
	cases := []struct {
		name string
		e    Evidence
		want string
	}{
		{"node host", Evidence{Load: 2, NodeHosts: []NodeHost{{Node: "primary", Role: "primary", CPUs: f(2), CPUBusy: f(1), RunQueue: f(50)}}},
			"the primary's host CPU was 100% busy, run queue 50.0 on 2 CPUs (sampled at scrapes, the exporter's own threads counted; CPU pressure not read: not recorded in this result)."},
		{"load generator", Evidence{Load: 2, CPUBusy: 0.99, LoadGenShare: 0.6, LoadGenCores: 1.2, Waits: Waits{CPU: 3, Client: 5}}, "using 1.2 cores (60% of the machine)."},
		{"log", Evidence{Load: 2, Waits: Waits{CPU: 3, Log: 10}, Device: Device{Name: "vda", AwaitMs: 4, Queue: 6}}, "were 77% of sampled sessions, device vda await 4.00 ms and queue 6.0."},
		// Busy at the one load it ran is no sign of other work: that load may be what made it busy.
		{"machine CPU", Evidence{Load: 2, CPUBusy: 0.92, WaitsAbsent: true},
			"the CPU saturated: machine CPU 92% busy, the load generator itself using 0.0 cores (0% of the machine), the sessions' waits not measured (no database sampler ran)."},
	}
	for _, c := range cases {
		s := WhatSaturated(FindKnee(steps, nil), []Evidence{c.e}, "threads")
		if !strings.Contains(s.Sentence, c.want) || strings.Contains(s.Sentence, "at 2 threads") {
			t.Errorf("%s: %q, want %q and no comparison with itself", c.name, s.Sentence, c.want)
		}
	}
}
