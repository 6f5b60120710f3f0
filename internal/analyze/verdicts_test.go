package analyze

import (
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/result"
)

// goodRun is a clean sweep: long steady windows, Little's law exact, no steal, the device
// traffic what the workload made, a dataset four times memory, reads on standbys.
func goodRun() ([]Step, []Evidence, Facts) {
	steps := mmcSweep([]int{1, 2, 4, 8, 16, 32}, 8, 1000, 0)
	var ev []Evidence
	for i := range steps {
		ps := make([]float64, 300)
		for j := range ps {
			ps[j] = steps[i].Throughput * (1 + 0.02*float64(j%3-1))
		}
		steps[i].PerSecond = ps
		ev = append(ev, Evidence{Load: steps[i].Load, CPUBusy: 0.5, Steal: 0.001, LoadGenCores: 0.1, LoadGenShare: 0.05,
			Device:             Device{Name: "vda", ReadMBps: 40, WriteMBps: 10, AwaitMs: 0.4, Queue: 1, Util: 0.5},
			ExpectedDeviceMBps: 50, Waits: Waits{CPU: 2, Log: 0.2}, Host: HostEvidence{Nodes: 1, ServerCPU: 3.5}})
	}
	return steps, ev, Facts{Cores: 8, DatasetBytes: 64 << 30, SharedBuffersBytes: 1 << 30, PageCacheBytes: 15 << 30,
		ReadIntentSessions: 10, ReadIntentOnStandby: 10}
}

// codes lists the codes of the verdicts that fired (not those not judged).
func codes(vs []Verdict) []string {
	var out []string
	for _, v := range Fired(vs) { // the verdicts that fired; "not judged" ones are not findings
		out = append(out, v.Code)
	}
	return out
}

func TestVerdictsQuietOnGoodRun(t *testing.T) {
	steps, ev, f := goodRun()
	if vs := Check(steps, ev, f, "VUs"); len(vs) != 0 {
		t.Errorf("good run got verdicts: %v", vs)
	}
	f.Storage, f.DirectIO = true, true
	if vs := Fired(Check(steps, ev, f, "threads")); len(vs) != 0 {
		t.Errorf("good storage run got verdicts: %v", vs)
	}
}

// Each bad run breaks one thing and must get exactly that verdict.
func TestEachVerdictFiresOnItsBadRun(t *testing.T) {
	cases := []struct {
		code  string
		spoil func([]Step, []Evidence, *Facts)
		want  string // a figure the message must carry
	}{
		{VFitsInMemory, func(s []Step, e []Evidence, f *Facts) { f.DatasetBytes = 2 << 30 }, "2.0 GiB"},
		{VWindowShort, func(s []Step, e []Evidence, f *Facts) { s[2].WindowSec, s[3].WindowSec = 30, 30 }, "at 4,8 VUs"},
		{VNotSteady, func(s []Step, e []Evidence, f *Facts) {
			for j := range s[3].PerSecond { // warm-up: throughput climbs across the window
				s[3].PerSecond[j] = s[3].Throughput * (0.6 + 0.8*float64(j)/float64(len(s[3].PerSecond)))
			}
		}, "trended +"},
		{VNotSteady, func(s []Step, e []Evidence, f *Facts) {
			for j := range s[1].PerSecond { // stalls: every fourth second gets nothing done
				if j%4 == 0 {
					s[1].PerSecond[j] = 0
				}
			}
		}, "varied by"},
		{VLoadGenSaturated, func(s []Step, e []Evidence, f *Facts) { // near its own cap: the whole machine
			e[4].LoadGenCores = 6.8
		}, "6.80 cores, 85% of the 8 CPUs (the machine) it may use"},
		{VLoadGenSaturated, func(s []Step, e []Evidence, f *Facts) { // pinned to one CPU, that one saturated
			e[4].LoadGenCores, e[4].Host.Cap = 0.6, result.CPUCap{Affinity: []int{0}, MachineCPUs: 8}
			e[4].Host.SetKnown, e[4].Host.SetBusy, e[4].Host.OtherBusy = true, 0.99, 0.4
			e[4].Host.RunDelayKnown, e[4].Host.RunDelay = true, 0.5
		}, "may use 1 CPU (affinity cpu 0), and those were 99% busy: it used 0.60 cores, and its threads together waited 0.50 s per second for a CPU while runnable, the servers 3.50 cores; the machine's other CPUs were 40% busy"},
		{VReadIntent, func(s []Step, e []Evidence, f *Facts) { f.ReadIntentOnStandby = 7 }, "3 of 10"},
		{VLittle, func(s []Step, e []Evidence, f *Facts) { s[1].MeanMs *= 0.5 }, "ratio 0.50"},
		{VSteal, func(s []Step, e []Evidence, f *Facts) { e[2].Steal = 0.12 }, "12%"},
		{VBusyHost, func(s []Step, e []Evidence, f *Facts) { e[0].CPUBusy = 0.9 }, "other work on the host took about 3.50 cores"},
		{VForeignIO, func(s []Step, e []Evidence, f *Facts) { e[3].Device.WriteMBps = 200 }, "240.0 MB/s"},
		{VErrors, func(s []Step, e []Evidence, f *Facts) {
			s[2].Ops, s[2].Errors, s[2].ErrorClasses = 900, 100, []string{"57P01×60", "08006×40"}
		}, "100 of 1000 operations failed (10%) at 4 VUs, SQLSTATE 57P01×60 08006×40"},
		{VSessionsLost, func(s []Step, e []Evidence, f *Facts) {
			s[2].SessionSeconds, s[2].DownSeconds, s[2].SessionsLost = 240, 12, 4
		}, "at 4 VUs 4 session(s) were lost and the workers were without one for 12.0 s of 240.0 (5%)"},
	}
	for _, c := range cases {
		steps, ev, f := goodRun()
		c.spoil(steps, ev, &f)
		vs := Fired(Check(steps, ev, f, "VUs"))
		if len(vs) != 1 || vs[0].Code != c.code {
			t.Errorf("%s: got %v", c.code, vs)
			continue
		}
		if !strings.Contains(vs[0].Message, c.want) {
			t.Errorf("%s: message %q lacks %q", c.code, vs[0].Message, c.want)
		}
	}
}

// Sessions lost and made again within ErrorShareLimit of the session time stay quiet; a
// session still lost at the window's end fires only once it has been lost for
// result.StillLostSeconds (one lost a moment before the end is not yet a lost load).
func TestSessionsLostVerdict(t *testing.T) {
	steps, ev, f := goodRun()
	steps[1].SessionSeconds, steps[1].DownSeconds, steps[1].SessionsLost = 240, 2.4, 3
	steps[1].Unrestored, steps[1].UnrestoredSeconds = 1, 0.2
	if vs := Check(steps, ev, f, "VUs"); len(vs) != 0 {
		t.Errorf("verdicts %v", vs)
	}
	steps[1].UnrestoredSeconds = 1.5
	vs := Fired(Check(steps, ev, f, "VUs"))
	if len(vs) != 1 || vs[0].Code != VSessionsLost || !strings.Contains(vs[0].Message, "1 still lost when the window closed") {
		t.Errorf("verdicts %v", vs)
	}
}

// A failed share at or below ErrorShareLimit stays quiet.
func TestErrorsVerdictQuietBelowTheLimit(t *testing.T) {
	steps, ev, f := goodRun()
	steps[1].Ops, steps[1].Errors = 1000, 10
	if vs := Check(steps, ev, f, "VUs"); len(vs) != 0 {
		t.Errorf("verdicts %v", vs)
	}
}

func TestPageCacheVerdicts(t *testing.T) {
	steps, ev, f := goodRun()
	f.Storage = true
	if vs := Fired(Check(steps, ev, f, "threads")); len(vs) != 1 || vs[0].Code != VPageCache || !strings.Contains(vs[0].Message, "buffered") {
		t.Errorf("buffered storage test: %v", vs)
	}
	f.DirectIO = true
	ev[2].Device.ReadMBps, ev[2].Device.WriteMBps = 5, 0 // claimed direct, device saw a tenth
	if vs := Fired(Check(steps, ev, f, "threads")); len(vs) != 1 || vs[0].Code != VPageCache || !strings.Contains(vs[0].Message, "5.0 MB/s") {
		t.Errorf("cache-served direct test: %v", vs)
	}
}
