package analyze

import (
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// hostFigures are one step's figures of the nodes' hosts, by their whole names.
type hostFigures map[string]float64

// remoteHostsResult is a sweep against two servers on other hosts (pg1 the primary, pg2 a
// standby) whose hosts were read from their node_exporters: figs gives each step's host
// figures, kept as per-second series inside the window as the sampler records them, and
// sources each step's host section (nil: none). Figures of the database sampler (pg.*)
// are kept as counters, as it keeps them.
func remoteHostsResult(t *testing.T, figs func(Step) hostFigures, sources func(Step) *result.HostsStep) *result.Result {
	t.Helper()
	sweep := mmcSweep([]int{1, 2, 4, 8, 16, 32}, 8, 1000, 0)
	steps := resultOf(t, sweep, "", func(s Step) map[string]float64 {
		return map[string]float64{"pg.pg1.wait.cpu": s.Load * 0.2, "pg.pg1.database_bytes": 300 << 20, "pg.pg1.shared_buffers_bytes": 128 << 20,
			result.OSMemAvailable: 8 << 30} // this machine's memory: not the servers'
	})
	for i := range steps {
		st := &steps[i]
		s := sweep[i]
		st.Series = map[string]result.TimeSeries{}
		for name, v := range figs(s) {
			if strings.HasPrefix(name, result.PGPrefix) { // the database sampler's: window means
				st.Counters[name] = v
				continue
			}
			st.Series[name] = result.TimeSeries{Start: st.Window.Start, T: []float64{1, 2, 3}, V: []float64{v, v, v}}
		}
		err := st.SetExtra(result.ExtraSample, result.SampleStep{Nodes: map[string]result.SampleNode{
			"pg1": {Info: result.PGNodeInfo{Name: "pg1", Remote: "10.0.0.5:5432"}},
			"pg2": {Info: result.PGNodeInfo{Name: "pg2", InRecovery: true, Remote: "10.0.0.6:5432"}}}})
		if sec := sources(s); err == nil && sec != nil {
			err = st.SetExtra(result.ExtraHosts, *sec)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	r := &result.Result{Steps: steps}
	r.Meta.Command = "stress"
	r.Meta.Host.Cores = 2
	return r
}

// quietHost is a host's figures well inside every threshold.
func quietHost(node string) hostFigures {
	n := func(f string) string { return result.HostName(node, f) }
	d := func(f string) string { return result.HostDiskName(node, "vdb", f) }
	return hostFigures{n(result.HostCPUs): 2, n(result.HostCPUBusy): 0.30, n(result.HostCPUIOWait): 0.01, n(result.HostCPUSteal): 0,
		n(result.HostRunQueue): 0.6, n(result.HostMemTotal): 4 << 30, n(result.HostMemAvailable): 3 << 30, n(result.HostMemPageCache): 1 << 30,
		n(result.HostNetRxBPS): 1e6, n(result.HostNetTxBPS): 2e6, n(result.HostNetErrors): 0,
		d(result.DiskIOPS): 50, d(result.DiskReadMBps): 0.5, d(result.DiskWriteMBps): 1, d(result.DiskAwaitMs): 0.4, d(result.DiskQueue): 0.1, d(result.DiskUtil): 0.05}
}

func both(a, b hostFigures) hostFigures {
	out := hostFigures{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func noSources(Step) *result.HostsStep { return nil }

func analyseHosts(t *testing.T, r *result.Result) Analysis {
	t.Helper()
	run := mustFromResult(t, r, Options{LoadName: "VUs"})
	return run.Variants[0].Result
}

func verdictOf(vs []Verdict, code string) (Verdict, bool) {
	for _, v := range vs {
		if v.Code == code {
			return v, true
		}
	}
	return Verdict{}, false
}

// A remote primary's host out of CPU from the knee on is what saturated, named with its
// figures; with both hosts quiet (the control) no host is named and each host's CPU is
// said instead of "not measured".
func TestWhatSaturatedNamesARemoteHostsCPU(t *testing.T) {
	hot := func(s Step) hostFigures {
		f := both(quietHost("pg1"), quietHost("pg2"))
		if s.Load >= 8 {
			f[result.HostName("pg1", result.HostCPUBusy)] = 0.97
			f[result.HostName("pg1", result.HostRunQueue)] = 5.1
		}
		return f
	}
	a := analyseHosts(t, remoteHostsResult(t, hot, noSources))
	if a.Saturated.Resource != ResHost || !strings.Contains(a.Saturated.Sentence, "the primary's host (pg1) CPU was 97% busy, run queue 5.1 on 2 CPUs (sampled at scrapes, the exporter's own threads counted; CPU pressure not read: not recorded in this result) (30% busy, run queue 0.6 at 1 VU)") {
		t.Fatalf("%+v", a.Saturated)
	}
	if v, ok := verdictOf(a.Verdicts, VSteal); ok {
		t.Errorf("steal read as 0 on both hosts: %+v", v)
	}

	quiet := func(Step) hostFigures { return both(quietHost("pg1"), quietHost("pg2")) }
	a = analyseHosts(t, remoteHostsResult(t, quiet, noSources))
	if a.Saturated.Resource == ResHost || !strings.Contains(a.Saturated.Sentence, "the primary's host (pg1) CPU 30% busy, device vdb 5% busy, the standby's host (pg2) CPU 30% busy") {
		t.Fatalf("control: %+v", a.Saturated)
	}
	// Busy without tasks waiting for a CPU (run queue below the CPUs) is not short of CPU.
	busyNoQueue := func(s Step) hostFigures {
		f := quiet(s)
		f[result.HostName("pg1", result.HostCPUBusy)] = 0.95
		f[result.HostName("pg1", result.HostRunQueue)] = 1.2
		return f
	}
	if a = analyseHosts(t, remoteHostsResult(t, busyNoQueue, noSources)); a.Saturated.Resource == ResHost {
		t.Fatalf("run queue 1.2 on 2 CPUs: %+v", a.Saturated)
	}
}

// Where the host's CPU pressure was read it decides "short of CPU", not the run queue (an
// instant at the scrape, the exporter's own threads counted): a high run queue with little
// waiting is not short, a low one with tasks waiting most of the window is, and the
// sentence says which figure it used.
func TestRemoteHostsCPUJudgedByPressure(t *testing.T) {
	figs := func(pressure, runQueue float64) func(Step) hostFigures {
		return func(s Step) hostFigures {
			f := both(quietHost("pg1"), quietHost("pg2"))
			f[result.HostName("pg1", result.HostCPUPressure)] = 0.05
			if s.Load >= 8 {
				f[result.HostName("pg1", result.HostCPUBusy)] = 0.97
				f[result.HostName("pg1", result.HostCPUPressure)] = pressure
				f[result.HostName("pg1", result.HostRunQueue)] = runQueue
			}
			return f
		}
	}
	if a := analyseHosts(t, remoteHostsResult(t, figs(HostCPUPressureShare-0.1, 9), noSources)); a.Saturated.Resource == ResHost {
		t.Errorf("run queue 9 on 2 CPUs but waiting %v of the time: %+v", HostCPUPressureShare-0.1, a.Saturated)
	}
	a := analyseHosts(t, remoteHostsResult(t, figs(0.8, 0.6), noSources))
	want := "the primary's host (pg1) CPU was 97% busy, some task waiting for a CPU 80% of the time (CPU pressure) (30% busy, some task waiting 5% at 1 VU)"
	if a.Saturated.Resource != ResHost || !strings.Contains(a.Saturated.Sentence, want) {
		t.Fatalf("%+v, want %q", a.Saturated, want)
	}
	if strings.Contains(a.Saturated.Sentence, "run queue") {
		t.Errorf("the run queue said beside the pressure that judged it: %s", a.Saturated.Sentence)
	}
}

// A standby's host whose device saturated is named with the device's figures beside the
// lowest load's; a device whose await and queue merely stayed put is not.
func TestWhatSaturatedNamesARemoteHostsDevice(t *testing.T) {
	figs := func(util, await, queue float64) func(Step) hostFigures {
		return func(s Step) hostFigures {
			f := both(quietHost("pg1"), quietHost("pg2"))
			if s.Load >= 8 {
				d := func(x string) string { return result.HostDiskName("pg2", "vdb", x) }
				f[d(result.DiskUtil)], f[d(result.DiskAwaitMs)], f[d(result.DiskQueue)], f[d(result.DiskIOPS)] = util, await, queue, 3000
				f[result.HostName("pg2", result.HostCPUIOWait)] = 0.35
			}
			return f
		}
	}
	a := analyseHosts(t, remoteHostsResult(t, figs(0.98, 12.3, 8.1), noSources))
	want := "the standby's host (pg2) device vdb was 98% busy, await 12.30 ms, queue 8.1, 3000 IOPS, iowait 35% (5% busy, 0.40 ms, queue 0.1 at 1 VU)"
	if a.Saturated.Resource != ResHost || !strings.Contains(a.Saturated.Sentence, want) {
		t.Fatalf("%+v", a.Saturated)
	}
	// Await and queue grown many times count as queueing though the device was not 90% busy.
	if a = analyseHosts(t, remoteHostsResult(t, figs(0.6, 4, 3), noSources)); a.Saturated.Resource != ResHost {
		t.Fatalf("await ×10, queue ×30: %+v", a.Saturated)
	}
	if a = analyseHosts(t, remoteHostsResult(t, figs(0.5, 0.5, 0.2), noSources)); a.Saturated.Resource == ResHost {
		t.Fatalf("control: %+v", a.Saturated)
	}
}

// A host whose figures were not read is not judged, with the reason its sampler recorded:
// steal is not judged for it, and the sentence says why it was not measured.
func TestAbsentHostIsNotJudged(t *testing.T) {
	onlyPg1 := func(Step) hostFigures { return quietHost("pg1") }
	refused := func(Step) *result.HostsStep {
		return &result.HostsStep{Nodes: map[string]result.HostSource{
			"pg1": {Source: "http://10.0.0.5:9100/metrics", Scrapes: 12},
			"pg2": {Source: "http://10.0.0.6:9100/metrics", Scrapes: 12, Failed: 12, Absent: "dial tcp 10.0.0.6:9100: connection refused"}}}
	}
	a := analyseHosts(t, remoteHostsResult(t, onlyPg1, refused))
	v, ok := verdictOf(a.Verdicts, VSteal)
	if !ok || !v.NotJudged || !strings.Contains(v.Message, "the standby's host (pg2): dial tcp 10.0.0.6:9100: connection refused") {
		t.Fatalf("steal: %+v", a.Verdicts)
	}
	if !strings.Contains(a.Saturated.Sentence, "the standby's host (pg2) not measured (dial tcp 10.0.0.6:9100: connection refused)") {
		t.Fatalf("%+v", a.Saturated)
	}
	// One figure missing: the CPU is judged on busy alone, saying why the run queue is not there.
	noQueue := func(s Step) hostFigures {
		f := both(quietHost("pg1"), quietHost("pg2"))
		delete(f, result.HostName("pg1", result.HostRunQueue))
		if s.Load >= 8 {
			f[result.HostName("pg1", result.HostCPUBusy)] = 0.96
		}
		return f
	}
	missing := func(Step) *result.HostsStep {
		return &result.HostsStep{Nodes: map[string]result.HostSource{"pg1": {Scrapes: 12, Missing: map[string]string{result.HostRunQueue: "node_procs_running not exported"}}}}
	}
	a = analyseHosts(t, remoteHostsResult(t, noQueue, missing))
	if !strings.Contains(a.Saturated.Sentence, "the primary's host (pg1) CPU was 96% busy (its CPU pressure not read: not recorded in this result; its run queue not read: node_procs_running not exported)") {
		t.Fatalf("%+v", a.Saturated)
	}
}

// Steal on a remote host is judged there, with its own IO beside it.
func TestStealOnARemoteHost(t *testing.T) {
	figs := func(s Step) hostFigures {
		f := both(quietHost("pg1"), quietHost("pg2"))
		if s.Load == 4 {
			f[result.HostName("pg2", result.HostCPUSteal)] = 0.08
		}
		return f
	}
	a := analyseHosts(t, remoteHostsResult(t, figs, noSources))
	v, ok := verdictOf(a.Verdicts, VSteal)
	if !ok || v.NotJudged || v.Message != "steal time on the standby's host (pg2) was 8% of its CPU at 4 VUs with little IO (50 IOPS on vdb): the hypervisor gave its CPU time to another guest or to the host during the run" {
		t.Fatalf("%+v", a.Verdicts)
	}
}

// The dataset is judged against the memory the servers' hosts had, not this machine's.
func TestFitsInMemoryOnTheNodesHosts(t *testing.T) {
	mem := func(pg1, pg2 float64) func(Step) hostFigures {
		return func(Step) hostFigures {
			f := both(quietHost("pg1"), quietHost("pg2"))
			f[result.HostName("pg1", result.HostMemAvailable)], f[result.HostName("pg2", result.HostMemAvailable)] = pg1, pg2
			return f
		}
	}
	// 300 MiB of data, 128 MiB of shared_buffers: pg2's host had 100 MiB available, 8 GiB here.
	a := analyseHosts(t, remoteHostsResult(t, mem(1<<30, 100<<20), noSources))
	if v, ok := verdictOf(a.Verdicts, VFitsInMemory); ok {
		t.Fatalf("judged on this machine's memory: %+v", v)
	}
	a = analyseHosts(t, remoteHostsResult(t, mem(1<<30, 2<<30), noSources))
	v, ok := verdictOf(a.Verdicts, VFitsInMemory)
	if !ok || !strings.Contains(v.Message, "page cache 1.0 GiB, what the primary's host (pg1) had available at the start") {
		t.Fatalf("%+v", a.Verdicts)
	}
}

// A host's device that moved far more than its server accounts for had other IO on it.
func TestForeignIOOnARemoteHost(t *testing.T) {
	figs := func(read float64) func(Step) hostFigures {
		return func(Step) hostFigures {
			f := both(quietHost("pg1"), quietHost("pg2"))
			f[result.HostDiskName("pg1", "vdb", result.DiskReadMBps)] = read
			f["pg.pg1.io_read_mb_per_s"], f["pg.pg1.io_write_mb_per_s"] = 2, 0.5
			return f
		}
	}
	a := analyseHosts(t, remoteHostsResult(t, figs(40), noSources))
	v, ok := verdictOf(a.Verdicts, VForeignIO)
	if !ok || !strings.HasPrefix(v.Message, "device vdb of the primary's host (pg1) moved 41.0 MB/s at 1 VU but the node's server accounts for 2.5 MB/s") {
		t.Fatalf("%+v", a.Verdicts)
	}
	if a = analyseHosts(t, remoteHostsResult(t, figs(2), noSources)); hasCode(Fired(a.Verdicts), VForeignIO) {
		t.Fatalf("control: %+v", a.Verdicts)
	}
}

// Network errors growing on a host under load are said beside what saturated.
func TestNetErrorsOnAHostAreNoted(t *testing.T) {
	figs := func(s Step) hostFigures {
		f := both(quietHost("pg1"), quietHost("pg2"))
		if s.Load >= 8 {
			f[result.HostName("pg1", result.HostNetErrors)] = 5
		}
		return f
	}
	a := analyseHosts(t, remoteHostsResult(t, figs, noSources))
	if !strings.Contains(a.Saturated.Sentence, "; meanwhile the primary's host (pg1) counted 5.0 network errors and drops per second.") {
		t.Fatalf("%+v", a.Saturated)
	}
	quiet := func(Step) hostFigures { return both(quietHost("pg1"), quietHost("pg2")) }
	if a = analyseHosts(t, remoteHostsResult(t, quiet, noSources)); strings.Contains(a.Saturated.Sentence, "network errors") {
		t.Fatalf("control: %+v", a.Saturated)
	}
}

// Figures kept as counters (a sampler that writes the window's means) read as series do.
func TestNodeHostFromCounters(t *testing.T) {
	st := result.Step{Window: result.Window{Start: time.Unix(0, 0), End: time.Unix(10, 0)}, Counters: quietHost("pg1")}
	hs, err := nodeHostsOf(&st, withSeriesMeans(st))
	if err != nil || len(hs) != 1 || hs[0].CPUBusy == nil || *hs[0].CPUBusy != 0.30 || hs[0].Device == nil || hs[0].Device.Name != "vdb" || hs[0].Label() != "pg1's host" {
		t.Fatalf("%+v %v", hs, err)
	}
	if got := hostsOf(st.Counters); len(got) != 0 {
		t.Fatalf("an exporter's host read as a modelled one: %+v", got)
	}
}

// An exporter lost mid-window leaves points up to its loss but no window figures: the
// host is absent with its sampler's reason, never judged on part of the window.
func TestHostLostMidWindowIsNotJudgedOnItsPoints(t *testing.T) {
	figs := func(s Step) hostFigures {
		f := both(quietHost("pg1"), quietHost("pg2"))
		f[result.HostName("pg2", result.HostCPUBusy)], f[result.HostName("pg2", result.HostRunQueue)] = 0.99, 9
		return f
	}
	lost := func(Step) *result.HostsStep {
		return &result.HostsStep{Nodes: map[string]result.HostSource{"pg1": {Scrapes: 12},
			"pg2": {Scrapes: 12, Failed: 6, Absent: "the read at the window's close failed (connection refused): the window's figures need it"}}}
	}
	a := analyseHosts(t, remoteHostsResult(t, figs, lost))
	if a.Saturated.Resource == ResHost || !strings.Contains(a.Saturated.Sentence, "the standby's host (pg2) not measured (the read at the window's close failed") {
		t.Fatalf("%+v", a.Saturated)
	}
	// Beside a host that saturated, the host not read is named as not judged.
	hot := func(s Step) hostFigures {
		f := figs(s)
		if s.Load >= 8 {
			f[result.HostName("pg1", result.HostCPUBusy)], f[result.HostName("pg1", result.HostRunQueue)] = 0.98, 4
		}
		return f
	}
	a = analyseHosts(t, remoteHostsResult(t, hot, lost))
	if a.Saturated.Resource != ResHost || !strings.Contains(a.Saturated.Sentence, "the primary's host (pg1) CPU was 98% busy") ||
		!strings.Contains(a.Saturated.Sentence, "; the standby's host (pg2) not judged (the read at the window's close failed") {
		t.Fatalf("%+v", a.Saturated)
	}
	// Without the reason its points are the window's figures (a sampler that keeps only series).
	if a = analyseHosts(t, remoteHostsResult(t, figs, noSources)); a.Saturated.Resource != ResHost {
		t.Fatalf("%+v", a.Saturated)
	}
}

func TestNodeHostLabel(t *testing.T) {
	for _, c := range []struct{ node, role, want string }{
		{"pg1", "primary", "the primary's host (pg1)"}, {"primary", "primary", "the primary's host"}, {"pg1", "", "pg1's host"},
	} {
		if got := (NodeHost{Node: c.node, Role: c.role}).Label(); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.node, c.role, got, c.want)
		}
	}
}

// Under a table of the servers' hosts' CPU from their exporters, busy-host is not judged
// for what is actually missing: the servers' share of that CPU, not the hosts' CPU.
func TestBusyHostOnExporterHostsSaysWhatIsMissing(t *testing.T) {
	a := analyseHosts(t, remoteHostsResult(t, func(Step) hostFigures { return both(quietHost("pg1"), quietHost("pg2")) }, noSources))
	v, ok := verdictOf(a.Verdicts, VBusyHost)
	if !ok || !v.NotJudged || strings.Contains(v.Message, "this host's CPU does not describe theirs") ||
		!strings.Contains(v.Message, "whose CPU their node_exporters gave (the primary's host (pg1), the standby's host (pg2)) but not how much of it each server used") {
		t.Fatalf("%+v", v)
	}
	// Without their exporters, this host's CPU is what does not describe theirs.
	a = analyseHosts(t, remoteHostsResult(t, func(Step) hostFigures { return hostFigures{} }, noSources))
	if v, ok := verdictOf(a.Verdicts, VBusyHost); !ok || !strings.Contains(v.Message, "this host's CPU does not describe theirs") {
		t.Fatalf("no exporters: %+v", v)
	}
}

// A host already short of CPU at the lowest load, where the run needs least, was busy with
// other work too: the sentence says so, by the rule that names the host; busy without
// tasks waiting there does not count.
func TestHostShortOfCPUAlreadyAtTheLowestLoad(t *testing.T) {
	figs := func(baseBusy, baseQueue float64) func(Step) hostFigures {
		return func(s Step) hostFigures {
			f := both(quietHost("pg1"), quietHost("pg2"))
			busy, queue := baseBusy, baseQueue
			if s.Load >= 8 {
				busy, queue = 0.99, 6
			}
			f[result.HostName("pg1", result.HostCPUBusy)], f[result.HostName("pg1", result.HostRunQueue)] = busy, queue
			return f
		}
	}
	const already = ", and as short of CPU already at 1 VU, so other work on the host took CPU too"
	for _, c := range []struct {
		busy, queue float64
		want        bool
	}{{0.95, 3, true}, {0.95, 1.5, false}, {0.85, 3, false}} {
		a := analyseHosts(t, remoteHostsResult(t, figs(c.busy, c.queue), noSources))
		if a.Saturated.Resource != ResHost || strings.Contains(a.Saturated.Sentence, already) != c.want {
			t.Errorf("%.2f busy, run queue %.1f at 1 VU: %s", c.busy, c.queue, a.Saturated.Sentence)
		}
	}
}
