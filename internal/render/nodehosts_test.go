package render

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// hostStep is a step whose window read pg1's host through its node_exporter (per-second
// series) and found pg2's exporter refusing.
func hostStep(t *testing.T, vus int, busy float64) result.Step {
	t.Helper()
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	st := result.Step{VUs: vus, Window: result.Window{Start: t0, End: t0.Add(10 * time.Second)}, Series: map[string]result.TimeSeries{}}
	for name, v := range map[string]float64{
		result.HostName("pg1", result.HostCPUs): 2, result.HostName("pg1", result.HostCPUBusy): busy,
		result.HostName("pg1", result.HostCPUIOWait): 0.02, result.HostName("pg1", result.HostCPUSteal): 0,
		result.HostName("pg1", result.HostCPUPressure):  0.6,
		result.HostName("pg1", result.HostMemAvailable): 3 << 30, result.HostName("pg1", result.HostNetRxBPS): 1.5e6,
		result.HostName("pg1", result.HostNetTxBPS): 2e6, result.HostName("pg1", result.HostNetErrors): 0,
		result.HostDiskName("pg1", "vdb", result.DiskIOPS): 1200, result.HostDiskName("pg1", "vdb", result.DiskUtil): 0.93,
		result.HostDiskName("pg1", "vda", result.DiskIOPS): 3, result.HostDiskName("pg1", "vda", result.DiskUtil): 0.01,
	} {
		st.Series[name] = result.TimeSeries{Start: t0, T: []float64{1, 2}, V: []float64{v, v}}
	}
	err := st.SetExtra(result.ExtraHosts, result.HostsStep{Nodes: map[string]result.HostSource{
		"pg1": {Source: "http://10.0.0.5:9100/metrics", Scrapes: 11, Missing: map[string]string{result.HostRunQueue: "the exporter did not report node_procs_running"}},
		"pg2": {Source: "http://10.0.0.6:9100/metrics", Scrapes: 11, Failed: 11, Absent: "connection refused"}}})
	if err == nil {
		err = st.SetExtra(result.ExtraSample, result.SampleStep{Nodes: map[string]result.SampleNode{"pg1": {Info: result.PGNodeInfo{Name: "pg1"}}}})
	}
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Each node's host is a row per step: its busiest device, "–" for what was not read,
// and a line under the table saying why.
func TestNodeHostsTable(t *testing.T) {
	var b bytes.Buffer
	NodeHosts(&b, []result.Step{hostStep(t, 1, 0.3), hostStep(t, 8, 0.97)}, "threads")
	out := b.String()
	for _, want := range []string{
		"nodes' hosts (their node_exporters), per step:",
		"threads  node           CPU busy  iowait  steal  CPU waiting  run queue at scrape  CPUs  mem available  device  IOPS  util  net rx MB/s  net tx MB/s  net err/s",
		"8        pg1 (primary)  97%       2%      0%     60%          –                    2     3.0 GiB        vdb     1200  93%   1.50         2.00         0.0",
		"8        pg2            –         –       –      –            –                    –     –              –       –     –     –            –            –",
		"– the primary's host (pg1): run queue: the exporter did not report node_procs_running\n",
		"– pg2's host: connection refused\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Count(out, "– pg2's host") != 1 {
		t.Errorf("a reason said once per host, not per step:\n%s", out)
	}
	// No run queue shown, nothing said of it; one shown, what it counts said once.
	if strings.Contains(out, RunQueueNote) {
		t.Errorf("the run queue explained where none was shown:\n%s", out)
	}
	queued := []result.Step{hostStep(t, 1, 0.3), hostStep(t, 8, 0.97)}
	for i := range queued {
		queued[i].Series[result.HostName("pg1", result.HostRunQueue)] = result.TimeSeries{Start: queued[i].Window.Start, T: []float64{1, 2}, V: []float64{3, 3}}
		if err := queued[i].SetExtra(result.ExtraHosts, result.HostsStep{Nodes: map[string]result.HostSource{"pg1": {Source: "http://10.0.0.5:9100/metrics", Scrapes: 11}}}); err != nil {
			t.Fatal(err)
		}
	}
	b.Reset()
	NodeHosts(&b, queued, "threads")
	if strings.Count(b.String(), "– "+RunQueueNote+"\n") != 1 {
		t.Errorf("the run queue shown, not explained once:\n%s", b.String())
	}
	// Steps without a node's host figures print nothing.
	b.Reset()
	NodeHosts(&b, []result.Step{{VUs: 1, Counters: map[string]float64{result.OSCPUBusy: 0.4}}}, "threads")
	if b.Len() != 0 {
		t.Errorf("printed %q", b.String())
	}
}

// A drill's hosts are told by cycle.
func TestDrillShowsNodeHostsByCycle(t *testing.T) {
	st := hostStep(t, 4, 0.5)
	if err := st.SetExtra(result.ExtraDrill, result.DrillCycle{Cycle: 2, Fault: "stop", From: "pg1"}); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	Drill(&b, &result.Result{Steps: []result.Step{st}}, nil)
	out := b.String()
	for _, want := range []string{"\ncycle  node           CPU busy", "\n2      pg1 (primary)  50%"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

// Where the figures came from is said: each exporter's URL, or, when every node was read
// through one Prometheus server, the server once in the header and each node's series.
func TestNodeHostsSayWhereTheFiguresCameFrom(t *testing.T) {
	var b bytes.Buffer
	NodeHosts(&b, []result.Step{hostStep(t, 1, 0.3)}, "threads")
	if want := "– read: pg1 from http://10.0.0.5:9100/metrics, pg2 from http://10.0.0.6:9100/metrics\n"; !strings.Contains(b.String(), want) {
		t.Errorf("missing %q in\n%s", want, b.String())
	}
	st := hostStep(t, 1, 0.3)
	if err := st.SetExtra(result.ExtraHosts, result.HostsStep{Nodes: map[string]result.HostSource{
		"pg1": {Source: `http://127.0.0.1:35779 instance="10.0.0.5:9100"`, Scrapes: 11},
		"pg2": {Source: `http://127.0.0.1:35779 instance="10.0.0.6:9100"`, Scrapes: 11, Failed: 11, Absent: "no series"}}}); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	NodeHosts(&b, []result.Step{st}, "threads")
	for _, want := range []string{"nodes' hosts (their node_exporters, through the Prometheus server http://127.0.0.1:35779), per step:\n",
		`– read: pg1 instance="10.0.0.5:9100", pg2 instance="10.0.0.6:9100"` + "\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
}

// Nodes whose exporters report one boot time are one machine: each node keeps its row (its
// devices and network are its exporter's own), and a line under the table says which
// nodes the machine carries; a node with a budget of its own is said to be read as the
// machine, not as its budget.
func TestNodeHostsSayWhichNodesShareAHost(t *testing.T) {
	st := hostStep(t, 1, 0.3)
	for _, n := range []string{"pg1", "pg2", "pg3"} {
		for name, v := range map[string]float64{result.HostName(n, result.HostBootTime): 1795842929, result.HostName(n, result.HostCPUBusy): 0.5} {
			st.Series[name] = result.TimeSeries{Start: st.Window.Start, T: []float64{1, 2}, V: []float64{v, v}}
		}
	}
	st.Counters = map[string]float64{result.HostName("pg2", result.HostCPUBudget): 0.6, result.HostName("pg2", result.HostMemoryBudget): 1 << 30}
	if err := st.SetExtra(result.ExtraHosts, result.HostsStep{Nodes: map[string]result.HostSource{
		"pg1": {Source: "http://10.0.0.5:9100/metrics", Scrapes: 11}, "pg2": {Source: "http://10.0.0.6:9100/metrics", Scrapes: 11},
		"pg3": {Source: "http://10.0.0.7:9100/metrics", Scrapes: 11}}}); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	NodeHosts(&b, []result.Step{st, st}, "threads")
	out := b.String()
	for _, want := range []string{
		"\n1        pg1 (primary)  50%", "\n1        pg2            50%", "\n1        pg3            50%",
		"– pg1, pg2 and pg3 are on one host (boot 2026-11-28 05:15:29 UTC): their exporters' CPU, run queue and memory are that machine's, judged once\n",
		"– pg2's exporter reads the machine's CPU and memory, not its budget's (0.6 cores, 1.0 GiB): its control group's figures are the budget's\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Count(out, "are on one host") != 1 {
		t.Errorf("the machine said more than once:\n%s", out)
	}
	rows, err := NodeHostRows([]result.Step{st})
	if err != nil || len(rows) != 3 {
		t.Fatalf("%d rows: %v", len(rows), err)
	}
	if got := NodeHostMachine(rows[1]); got != "one host with pg1 and pg3 (boot 2026-11-28 05:15:29 UTC); pg2's exporter reads the machine's CPU and memory, not its budget's (0.6 cores, 1.0 GiB): its control group's figures are the budget's" {
		t.Errorf("%s", got)
	}
}

// A host read through a Prometheus server has figures made of the scrapes nearest the
// window's open and close, outside it: how far is said under the table (it was only in
// result.json); one read directly, within SpanNoted of the window, says nothing of it.
func TestNodeHostsSayTheReadingsSpan(t *testing.T) {
	st := hostStep(t, 4, 0.5)
	w := st.Window
	if err := st.SetExtra(result.ExtraHosts, result.HostsStep{Nodes: map[string]result.HostSource{
		"pg1": {Source: `http://127.0.0.1:35779 instance="10.0.0.5:9100"`, Scrapes: 11,
			Span: &result.Window{Start: w.Start.Add(-600 * time.Millisecond), End: w.End.Add(900 * time.Millisecond)}},
		"pg2": {Source: `http://127.0.0.1:35779 instance="10.0.0.6:9100"`, Scrapes: 11,
			Span: &result.Window{Start: w.Start.Add(5 * time.Millisecond), End: w.End.Add(100 * time.Millisecond)}}}}); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	NodeHosts(&b, []result.Step{st}, "threads")
	out := b.String()
	want := "– the primary's host (pg1) (threads 4): its figures are of readings from 0.6 s before the window's open to 0.9 s after its close (a window of 10.0 s)\n"
	if !strings.Contains(out, want) {
		t.Errorf("missing %q in\n%s", want, out)
	}
	if strings.Contains(out, "pg2's host (threads") {
		t.Errorf("a span within %.2f s of the window noted:\n%s", SpanNoted, out)
	}
}
