package analyze

import (
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/result"
)

// bootedAt gives both hosts a boot time (one machine when equal) and, from load 8, CPU
// busy 97% with a run queue of 5.1 on both (what two exporters of one machine both read).
func bootedAt(boot1, boot2 float64, hot bool) func(Step) hostFigures {
	return func(s Step) hostFigures {
		f := both(quietHost("pg1"), quietHost("pg2"))
		f[result.HostName("pg1", result.HostBootTime)] = boot1
		f[result.HostName("pg2", result.HostBootTime)] = boot2
		if hot && s.Load >= 8 {
			for _, n := range []string{"pg1", "pg2"} {
				f[result.HostName(n, result.HostCPUBusy)] = 0.97
				f[result.HostName(n, result.HostRunQueue)] = 5.1
			}
		}
		return f
	}
}

// Exporters that report one boot time, CPUs and memory describe one machine (network
// namespaces of it): its CPU is named once, with the nodes it carries, never as each node's
// host; the stored analysis says which nodes share it, and that their devices (reported
// alike) are the machine's too.
func TestOneMachineUnderSeveralExportersIsNamedOnce(t *testing.T) {
	a := analyseHosts(t, remoteHostsResult(t, bootedAt(1795842929, 1795842929, true), noSources))
	want := "the host of pg1 and pg2 (one machine: boot 2026-11-28 05:15:29 UTC) CPU was 97% busy, run queue 5.1 on 2 CPUs (sampled at scrapes, the exporter's own threads counted; CPU pressure not read: not recorded in this result) (30% busy, run queue 0.6 at 1 VU)"
	if a.Saturated.Resource != ResHost || !strings.Contains(a.Saturated.Sentence, want) || strings.Count(a.Saturated.Sentence, "CPU was") != 1 ||
		strings.Contains(a.Saturated.Sentence, "standby's host") {
		t.Fatalf("%+v", a.Saturated)
	}
	if len(a.SharedHosts) != 1 || strings.Join(a.SharedHosts[0].Nodes, ",") != "pg1,pg2" || !a.SharedHosts[0].SameDevices {
		t.Fatalf("shared hosts: %+v", a.SharedHosts)
	}
	if s := a.SharedHosts[0].Sentence(); s != "pg1 and pg2 are on one host (boot 2026-11-28 05:15:29 UTC): their exporters' CPU, run queue, memory and devices are that machine's, judged once" {
		t.Errorf("%s", s)
	}
	// Quiet, the figures of the sentence that found nothing say the machine once too.
	a = analyseHosts(t, remoteHostsResult(t, bootedAt(1795842929, 1795842929, false), noSources))
	if !strings.Contains(a.Saturated.Sentence, "the host of pg1 and pg2 (one machine: boot 2026-11-28 05:15:29 UTC) CPU 30% busy, device vdb 5% busy") ||
		strings.Contains(a.Saturated.Sentence, "standby's host") {
		t.Fatalf("control: %+v", a.Saturated)
	}
}

// Two exporters of one machine that each watch a device of their own (as e2e/hosts' fixtures
// start them) share the machine's CPU but not their devices: the CPU is judged once, each
// device as its node's, the saturated one named and the control's not.
func TestOneMachineWithDevicesApartJudgesEachDevice(t *testing.T) {
	figs := func(s Step) hostFigures {
		f := bootedAt(1795842929, 1795842929, false)(s)
		for name, v := range f {
			if n, _, fig, ok := result.ParseHostDiskName(name); ok && n == "pg2" {
				delete(f, name)
				f[result.HostDiskName(n, "loop4", fig)] = v
			}
		}
		if s.Load >= 8 {
			d := func(x string) string { return result.HostDiskName("pg1", "vdb", x) }
			f[d(result.DiskUtil)], f[d(result.DiskAwaitMs)], f[d(result.DiskQueue)] = 0.98, 12.3, 8.1
		}
		return f
	}
	a := analyseHosts(t, remoteHostsResult(t, figs, noSources))
	s := a.Saturated.Sentence
	if a.Saturated.Resource != ResHost || !strings.Contains(s, "the primary's host (pg1) device vdb was 98% busy") || strings.Contains(s, "loop4") {
		t.Fatalf("%+v", a.Saturated)
	}
	if len(a.SharedHosts) != 1 || a.SharedHosts[0].SameDevices {
		t.Fatalf("shared hosts: %+v", a.SharedHosts)
	}
	quiet := func(Step) hostFigures { return figs(Step{Load: 1}) }
	a = analyseHosts(t, remoteHostsResult(t, quiet, noSources))
	if want := "the host of pg1 and pg2 (one machine: boot 2026-11-28 05:15:29 UTC) CPU 30% busy, pg1's device vdb 5% busy, pg2's device loop4 5% busy"; !strings.Contains(a.Saturated.Sentence, want) {
		t.Fatalf("control: %+v", a.Saturated)
	}
}

// Hosts are one machine only when everything their exporters say of the machine agrees:
// another boot time, other CPUs or other memory keep them apart, each named as its node's;
// a host without a boot time is never merged.
func TestHostsApartAreNamedApart(t *testing.T) {
	for name, figs := range map[string]func(Step) hostFigures{
		"boot time": bootedAt(1795842929, 1795842000, true),
		"memory": func(s Step) hostFigures {
			f := bootedAt(1795842929, 1795842929, true)(s)
			f[result.HostName("pg2", result.HostMemTotal)] = 8 << 30
			return f
		},
		"cpus": func(s Step) hostFigures {
			f := bootedAt(1795842929, 1795842929, true)(s)
			f[result.HostName("pg2", result.HostCPUs)] = 4
			f[result.HostName("pg2", result.HostRunQueue)] = 9
			return f
		},
		"no boot time": func(s Step) hostFigures {
			f := bootedAt(1795842929, 1795842929, true)(s)
			delete(f, result.HostName("pg2", result.HostBootTime))
			return f
		},
	} {
		a := analyseHosts(t, remoteHostsResult(t, figs, noSources))
		s := a.Saturated.Sentence
		if !strings.Contains(s, "the primary's host (pg1) CPU was 97% busy") || !strings.Contains(s, "the standby's host (pg2) CPU was 97% busy") ||
			strings.Contains(s, "one machine") || len(a.SharedHosts) != 0 {
			t.Errorf("%s: %+v %+v", name, a.Saturated, a.SharedHosts)
		}
	}
}

// A device that the exporters of one machine report alike carries every one of its
// servers' IO: foreign-io compares it with their sum, not with one server's.
func TestForeignIOOnOneMachineCountsEveryServer(t *testing.T) {
	figs := func(pg2MBps float64) func(Step) hostFigures {
		return func(s Step) hostFigures {
			f := bootedAt(1795842929, 1795842929, false)(s)
			for _, n := range []string{"pg1", "pg2"} {
				f[result.HostDiskName(n, "vdb", result.DiskWriteMBps)] = 40
				f[result.HostDiskName(n, "vdb", result.DiskReadMBps)] = 0
			}
			f[result.PGName("pg1", result.PGIOWriteMBps)] = 20
			f[result.PGName("pg2", result.PGIOWriteMBps)] = pg2MBps
			return f
		}
	}
	if _, ok := verdictOf(analyseHosts(t, remoteHostsResult(t, figs(20), noSources)).Verdicts, VForeignIO); ok {
		t.Errorf("two servers writing 20 MB/s each on one machine's 40 MB/s device: foreign-io")
	}
	v, ok := verdictOf(analyseHosts(t, remoteHostsResult(t, figs(2), noSources)).Verdicts, VForeignIO)
	if !ok || !strings.Contains(v.Message, "device vdb of the host of pg1 and pg2 (one machine") || !strings.Contains(v.Message, "their servers account for 22.0 MB/s") {
		t.Errorf("%+v", v)
	}
}

// A node with a CPU budget (its control group) whose machine's CPU saturated: the sentence
// says that the exporter's figure is the machine's, and what the budget's own figures
// (its control group's) say, which are what the budget is judged by.
func TestMachineCPUBesideANodesBudget(t *testing.T) {
	r := remoteHostsResult(t, bootedAt(1795842929, 1795842929, true), noSources)
	for i := range r.Steps {
		for k, v := range hostCounters("pg1", 0.6, 0.3, 0, 1<<30) { // the control-group sampler keeps counters
			r.Steps[i].Counters[k] = v
		}
	}
	a := analyseHosts(t, r)
	want := "CPU was 97% busy, run queue 5.1 on 2 CPUs (sampled at scrapes, the exporter's own threads counted; CPU pressure not read: not recorded in this result) (30% busy, run queue 0.6 at 1 VU); that is the machine's CPU, not a budget's: by its control group pg1 used 50% of its 0.6 cores"
	if a.Saturated.Resource != ResHost || !strings.Contains(a.Saturated.Sentence, want) {
		t.Fatalf("%+v", a.Saturated)
	}
}

// The machine's name, where the exporters gave node_uname_info, names the machine, and
// two names tell two machines apart whatever their boot times.
func TestMachineNamesFromUname(t *testing.T) {
	named := func(pg1, pg2 string) func(Step) *result.HostsStep {
		return func(Step) *result.HostsStep {
			return &result.HostsStep{Nodes: map[string]result.HostSource{
				"pg1": {Source: "http://10.0.0.5:9100/metrics", Scrapes: 8, Nodename: pg1, Machine: "x86_64"},
				"pg2": {Source: "http://10.0.0.6:9100/metrics", Scrapes: 8, Nodename: pg2, Machine: "x86_64"}}}
		}
	}
	a := analyseHosts(t, remoteHostsResult(t, bootedAt(1795842929, 1795842929, true), named("vm", "vm")))
	if want := "the host of pg1 and pg2 (one machine: vm, boot 2026-11-28 05:15:29 UTC) CPU was 97% busy"; !strings.Contains(a.Saturated.Sentence, want) {
		t.Errorf("%+v", a.Saturated)
	}
	if len(a.SharedHosts) != 1 || a.SharedHosts[0].Nodename != "vm" {
		t.Errorf("shared hosts: %+v", a.SharedHosts)
	}
	a = analyseHosts(t, remoteHostsResult(t, bootedAt(1795842929, 1795842929, true), named("db1", "db2")))
	if strings.Contains(a.Saturated.Sentence, "one machine") || len(a.SharedHosts) != 0 {
		t.Errorf("db1 and db2 booted in one second: %+v %+v", a.Saturated, a.SharedHosts)
	}
}

// Nodes on one machine have one memory: fits-in-memory names the machine, with no "least"
// of one, and judges each node's copy of the data against its share of the machine's page
// cache (it judged one copy against all of it).
func TestFitsInMemoryOfOneMachine(t *testing.T) {
	a := analyseHosts(t, remoteHostsResult(t, bootedAt(1795842929, 1795842929, false), noSources))
	v, ok := verdictOf(a.Verdicts, VFitsInMemory)
	want := "fits in the memory of the nodes' one host (shared_buffers 128.0 MiB + page cache 1.5 GiB, a node's share of the 3.0 GiB the host of pg1 and pg2 (one machine: boot 2026-11-28 05:15:29 UTC) had available at the start: its 2 nodes each cache a copy of the data of their own): "
	if !ok || !strings.Contains(v.Message, want) {
		t.Fatalf("%+v", a.Verdicts)
	}
	// 300 MiB of data and 128 MiB of shared_buffers a node; the machine has 300 MiB
	// available: one copy would fit, each node's share (150 MiB) does not.
	tight := func(s Step) hostFigures {
		f := bootedAt(1795842929, 1795842929, false)(s)
		f[result.HostName("pg1", result.HostMemAvailable)], f[result.HostName("pg2", result.HostMemAvailable)] = 300<<20, 300<<20
		return f
	}
	a = analyseHosts(t, remoteHostsResult(t, tight, noSources))
	if v, ok := verdictOf(a.Verdicts, VFitsInMemory); ok {
		t.Fatalf("two copies of 300 MiB said to fit in 300 MiB of one page cache: %+v", v)
	}
}
