package analyze

import (
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/result"
)

// A SELECT 1 stress run on a quiet 2-CPU machine: the servers' CPU measured from /proc
// (1.1 cores) and the load generator's (0.45) account for what the machine used, so no
// busy host, though pg_stat_activity saw almost no session on CPU (the old false alarm).
func TestBusyHostRestsOnMeasuredServerCPU(t *testing.T) {
	f := Facts{Cores: 2}
	quiet := []Evidence{{Load: 1, CPUBusy: 0.82, LoadGenCores: 0.45, Waits: Waits{CPU: 0.05}, Host: HostEvidence{Nodes: 1, ServerCPU: 1.1, IRQ: 0.03}}}
	if v := busyHost(quiet, f, "threads"); v != nil {
		t.Errorf("quiet machine: %+v", v)
	}
	burners := []Evidence{{Load: 1, CPUBusy: 1.0, LoadGenCores: 0.3, Host: HostEvidence{Nodes: 1, ServerCPU: 0.6}}}
	v := busyHost(burners, f, "threads")
	if v == nil || v.NotJudged || !strings.Contains(v.Message, "the servers 0.60, measured from /proc") || !strings.Contains(v.Message, "about 1.00 cores") {
		t.Errorf("two burners: %+v", v)
	}
	// Without the servers' CPU, or for servers elsewhere, it is not judged, never guessed.
	absent := []Evidence{{Load: 1, CPUBusy: 1.0, LoadGenCores: 0.3, Host: HostEvidence{Nodes: 1, ServerCPUAbsent: "primary: the server runs in another pid namespace"}}}
	if v := busyHost(absent, f, "threads"); v == nil || !v.NotJudged || !strings.Contains(v.Message, "another pid namespace") {
		t.Errorf("server CPU absent: %+v", v)
	}
	remote := []Evidence{{Load: 1, CPUBusy: 1.0, Host: HostEvidence{Nodes: 1, Remote: "primary at 10.0.0.5"}}}
	if v := busyHost(remote, f, "threads"); v == nil || !v.NotJudged || !strings.Contains(v.Message, "another host (primary at 10.0.0.5)") {
		t.Errorf("remote: %+v", v)
	}
	if v := busyHost([]Evidence{{Load: 1, CPUAbsent: true, Host: HostEvidence{Nodes: 1, ServerCPU: 1}}}, f, "threads"); v == nil || !v.NotJudged {
		t.Errorf("no OS sampler: %+v", v)
	}
	if v := busyHost([]Evidence{{Load: 1, CPUBusy: 0.5}}, f, "threads"); v == nil || !v.NotJudged || !strings.Contains(v.Message, "no database sampler") {
		t.Errorf("no database sampler: %+v", v)
	}
}

// The load generator is judged against the CPU it may use: a 2-thread control on the
// whole machine, which shares a pinned machine with the servers, is not accused; 64
// threads pinned to one CPU whose CPU is saturated while the other CPU is not, are.
func TestLoadGenAgainstItsOwnCap(t *testing.T) {
	whole := result.CPUCap{Affinity: []int{0, 1}, MachineCPUs: 2}
	control := []Evidence{{Load: 2, CPUBusy: 0.97, LoadGenCores: 0.55, LoadGenShare: 0.27, Host: HostEvidence{Nodes: 1, ServerCPU: 1.3, Cap: whole}}}
	if v := loadGenSaturated(control, 2, "threads"); v != nil {
		t.Errorf("2-thread control: %+v", v)
	}
	pinned := []Evidence{{Load: 64, CPUBusy: 0.8, LoadGenCores: 0.6, LoadGenShare: 0.6, Host: HostEvidence{Nodes: 1, ServerCPU: 0.9,
		Cap: result.CPUCap{Affinity: []int{0}, MachineCPUs: 2}, SetKnown: true, SetBusy: 0.99, OtherBusy: 0.6, RunDelayKnown: true, RunDelay: 0.7}}}
	v := loadGenSaturated(pinned, 2, "threads")
	if v == nil || !strings.Contains(v.Message, "1 CPU (affinity cpu 0), and those were 99% busy") || !strings.Contains(v.Message, "together waited 0.70 s per second") ||
		!strings.Contains(v.Message, "other CPUs were 60% busy") {
		t.Errorf("64 threads under taskset -c 0: %+v", v)
	}
	// Pinned, its CPU saturated, but its threads never waited for it: not short of CPU.
	pinned[0].Host.RunDelay = 0.01
	if v := loadGenSaturated(pinned, 2, "threads"); v != nil {
		t.Errorf("pinned, not waiting: %+v", v)
	}
	// The whole machine saturated by other work and the generator waiting: busy-host's, not this.
	control[0].Host.SetKnown, control[0].Host.SetBusy, control[0].Host.RunDelayKnown, control[0].Host.RunDelay = true, 1, true, 0.9
	if v := loadGenSaturated(control, 2, "threads"); v != nil {
		t.Errorf("unconfined on a busy machine: %+v", v)
	}
	// A control-group quota of half a core, nearly all used.
	quota := []Evidence{{Load: 8, LoadGenCores: 0.45, Host: HostEvidence{Cap: result.CPUCap{Affinity: []int{0, 1}, MachineCPUs: 2, QuotaCores: 0.5, QuotaFrom: "/sys/fs/cgroup/x/cpu.max"}}}}
	if v := loadGenSaturated(quota, 2, "threads"); v == nil || !strings.Contains(v.Message, "90% of the 0.5 cores") || !strings.Contains(v.Message, "quota 0.5 cores") {
		t.Errorf("quota: %+v", v)
	}
}

// Steal during heavy IO is put down to the IO path, with the lightest-IO step's steal
// beside it; steal with little IO to the hypervisor; servers elsewhere are not judged.
func TestStealSaysOnlyWhatTheFactsSupport(t *testing.T) {
	io := []Evidence{{Load: 1, Steal: 0.004, Device: Device{Name: "vda", IOPS: 300}}, {Load: 16, Steal: 0.13, Device: Device{Name: "vda", IOPS: 41000}}}
	v := steal(io, "outstanding IOs")
	if v.Code != VSteal || !strings.Contains(v.Message, "41000 IOPS (at 1 outstanding IO, 300 IOPS, steal was 0.4%)") || !strings.Contains(v.Message, "the IO path's cost rather than a noisy neighbour's") {
		t.Errorf("steal during IO: %+v", v)
	}
	cpu := []Evidence{{Load: 4, Steal: 0.12, Device: Device{Name: "vda", IOPS: 50}}}
	if v := steal(cpu, "VUs"); v.Code != VSteal || !strings.Contains(v.Message, "with little IO (50 IOPS)") {
		t.Errorf("steal without IO: %+v", v)
	}
	cpu[0].Host.Remote = "primary at 10.0.0.5"
	if v := steal(cpu, "VUs"); !v.NotJudged || !strings.Contains(v.Message, "another host") {
		t.Errorf("remote: %+v", v)
	}
	unsampled := []Evidence{{Load: 4, Steal: 0.12}}
	if v := steal(unsampled, "VUs"); v.Code != VSteal || !strings.Contains(v.Message, "IO was not measured") || strings.Contains(v.Message, "IOPS") {
		t.Errorf("steal with IO not measured: %+v", v)
	}
	if v := steal([]Evidence{{Load: 1, Steal: 0.01}}, "VUs"); v.Code != "" {
		t.Errorf("no steal: %+v", v)
	}
}

// For servers on another host, this host's busy CPU is not said to be theirs.
func TestSaturationNotOnThisHostsCPUForRemoteServers(t *testing.T) {
	k := Knee{Characteristic: &Point{Load: 1}, Knee: &Point{Load: 4}, Peak: &Point{Load: 8}}
	ev := []Evidence{{Load: 1, CPUBusy: 0.5}, {Load: 4, CPUBusy: 0.97}, {Load: 8, CPUBusy: 0.98}}
	if s := WhatSaturated(k, ev, "VUs"); s.Resource != ResCPU {
		t.Fatalf("local servers: %+v", s)
	}
	for i := range ev {
		ev[i].Host.Remote = "primary at 10.0.0.5"
	}
	if s := WhatSaturated(k, ev, "VUs"); s.Resource == ResCPU || !strings.Contains(s.Sentence, "they run on another host") {
		t.Errorf("remote servers: %+v", s)
	}
}

// Repeats that did not measure the load generator's set or run delay are left out of
// their means: absent is not 0.
func TestMeanHostAveragesOnlyWhatWasMeasured(t *testing.T) {
	es := []Evidence{
		{Host: HostEvidence{SetBusy: 0.9, OtherBusy: 0.2, SetKnown: true, RunDelay: 0.4, RunDelayKnown: true}},
		{Host: HostEvidence{}},
	}
	m := meanHost(es)
	if !m.SetKnown || m.SetBusy != 0.9 || m.OtherBusy != 0.2 || !m.RunDelayKnown || m.RunDelay != 0.4 {
		t.Errorf("mean with one repeat unmeasured: %+v", m)
	}
	if m := meanHost(es[1:]); m.SetKnown || m.RunDelayKnown || m.SetBusy != 0 || m.RunDelay != 0 {
		t.Errorf("nothing measured: %+v", m)
	}
}
