package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// nodeHostsRun is a two-step stress run whose pg1 host was read from its node_exporter,
// per second, and whose pg2 exporter refused every scrape.
func nodeHostsRun(t *testing.T) *result.Result {
	t.Helper()
	r := &result.Result{Schema: 1, Complete: true, Meta: result.Meta{Command: "stress"}}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 2 {
		at := t0.Add(time.Duration(10*i) * time.Second)
		s := func(unit string, v float64) result.TimeSeries {
			return result.TimeSeries{Unit: unit, Start: at, T: []float64{1, 2}, V: []float64{v, v}}
		}
		st := result.Step{Index: i, Point: i, VUs: 1 + i, Window: result.Window{Start: at, End: at.Add(10 * time.Second)}, Complete: true,
			Series: map[string]result.TimeSeries{
				result.HostName("pg1", result.HostCPUs):                 s("cpus", 2),
				result.HostName("pg1", result.HostCPUBusy):              s("share", 0.4+0.5*float64(i)),
				result.HostName("pg1", result.HostRunQueue):             s("tasks", 1+4*float64(i)),
				result.HostName("pg1", result.HostMemAvailable):         s("bytes", 3<<30),
				result.HostDiskName("pg1", "vdb", result.DiskUtil):      s("share", 0.2),
				result.HostDiskName("pg1", "vdb", result.DiskIOPS):      s("ops/s", 300),
				result.HostDiskName("pg1", "vda", result.DiskUtil):      s("share", 0.01),
				result.HostName("standby1", result.HostCPUCores):        s("cores", 0.3), // a modelled host's, charted apart
				result.HostName("pg1", result.HostScrapeOffsetS):        s("s", 0.01),
				result.HostDiskName("pg1", "vdb", result.DiskWriteMBps): s("MB/s", 3),
				result.HostName("pg1", result.HostNetErrors):            s("1/s", 0),
			}}
		if err := st.SetExtra(result.ExtraHosts, result.HostsStep{Nodes: map[string]result.HostSource{
			"pg1": {Source: "http://10.0.0.5:9100/metrics", Scrapes: 11},
			"pg2": {Source: "http://10.0.0.6:9100/metrics", Scrapes: 11, Failed: 11, Absent: "connection refused"}}}); err != nil {
			t.Fatal(err)
		}
		r.Steps = append(r.Steps, st)
	}
	return r
}

// The report shows each node's host per step, "–" with why for what was not read, and
// charts the hosts' figures over time apart from the modelled hosts', with only each
// host's busiest device.
func TestNodeHostsInTheReport(t *testing.T) {
	e := build(t, NewRun("hosts", nodeHostsRun(t)))[0]
	tb := e.NodeHostsTable()
	var out bytes.Buffer
	if err := WriteText(&out, tb); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"CPU busy", "90%", "run queue", "5.0", "vdb", "pg2", "pg2's host: connection refused", "read from", "http://10.0.0.6:9100/metrics"} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in\n%s", want, text)
		}
	}
	if len(tb.Rows) != 4 {
		t.Errorf("%d rows, want a row per step and node", len(tb.Rows))
	}
	page, err := HTML([]*Experiment{e}, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(page, []byte(`class="chart timeseries nodehost"`)); n == 0 || !bytes.Contains(page, []byte("nodes&#39; hosts over time")) {
		t.Fatalf("%d node host charts", n)
	}
	if n := bytes.Count(page, []byte(`class="chart timeseries host"`)); n != 1 {
		t.Errorf("%d modelled host charts, want the one of standby1's cores", n)
	}
	for _, absent := range []string{"pg1 vda", "clock_offset"} {
		if bytes.Contains(page, []byte(absent)) {
			t.Errorf("charted %q", absent)
		}
	}
	// Without node hosts, no table.
	if tb := build(t, NewRun("r", rorStudy().result(t)))[0].NodeHostsTable(); len(tb.Rows) != 0 {
		t.Errorf("%+v", tb)
	}
}

// Nodes whose exporters describe one machine say so in a column of their own: each row
// names the other nodes on its host.
func TestNodeHostsInTheReportSayWhichShareAHost(t *testing.T) {
	r := nodeHostsRun(t)
	for i := range r.Steps {
		st := &r.Steps[i]
		for _, n := range []string{"pg1", "pg2"} {
			for name, v := range map[string]float64{result.HostName(n, result.HostBootTime): 1795842929, result.HostName(n, result.HostCPUBusy): 0.5} {
				st.Series[name] = result.TimeSeries{Start: st.Window.Start, T: []float64{1, 2}, V: []float64{v, v}}
			}
		}
		if err := st.SetExtra(result.ExtraHosts, result.HostsStep{Nodes: map[string]result.HostSource{
			"pg1": {Source: "http://10.0.0.5:9100/metrics", Scrapes: 11}, "pg2": {Source: "http://10.0.0.6:9100/metrics", Scrapes: 11}}}); err != nil {
			t.Fatal(err)
		}
	}
	tb := build(t, NewRun("hosts", r))[0].NodeHostsTable()
	var out bytes.Buffer
	if err := WriteText(&out, tb); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"its host", "one host with pg2 (boot 2026-11-28 05:15:29 UTC)", "one host with pg1 (boot 2026-11-28 05:15:29 UTC)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in\n%s", want, out.String())
		}
	}
}
