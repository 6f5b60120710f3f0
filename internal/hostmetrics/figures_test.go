package hostmetrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/agbench/agbench/internal/result"
)

// body is a node_exporter answer cut down to the series a Reading uses, from a real one
// (node_exporter 1.5, two CPUs, one disk, one interface and loopback).
func body(cpu0Idle, cpu0User, reads, ioTime, rx, nodeTime string) string {
	return `# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.
# TYPE node_cpu_seconds_total counter
node_cpu_seconds_total{cpu="0",mode="idle"} ` + cpu0Idle + `
node_cpu_seconds_total{cpu="0",mode="iowait"} 10
node_cpu_seconds_total{cpu="0",mode="steal"} 0
node_cpu_seconds_total{cpu="0",mode="user"} ` + cpu0User + `
node_cpu_seconds_total{cpu="1",mode="idle"} 100
node_cpu_seconds_total{cpu="1",mode="user"} 50
# TYPE node_procs_running gauge
node_procs_running 3
# TYPE node_memory_MemTotal_bytes gauge
node_memory_MemTotal_bytes 2.5e+10
# TYPE node_memory_MemAvailable_bytes gauge
node_memory_MemAvailable_bytes 1.2e+10
# TYPE node_disk_reads_completed_total counter
node_disk_reads_completed_total{device="vda"} ` + reads + `
# TYPE node_disk_writes_completed_total counter
node_disk_writes_completed_total{device="vda"} 0
# TYPE node_disk_read_bytes_total counter
node_disk_read_bytes_total{device="vda"} 0
# TYPE node_disk_written_bytes_total counter
node_disk_written_bytes_total{device="vda"} 0
# TYPE node_disk_read_time_seconds_total counter
node_disk_read_time_seconds_total{device="vda"} 1
# TYPE node_disk_write_time_seconds_total counter
node_disk_write_time_seconds_total{device="vda"} 0
# TYPE node_disk_io_time_seconds_total counter
node_disk_io_time_seconds_total{device="vda"} ` + ioTime + `
# TYPE node_network_receive_bytes_total counter
node_network_receive_bytes_total{device="eth0"} ` + rx + `
node_network_receive_bytes_total{device="lo"} 9e+09
# TYPE node_network_transmit_bytes_total counter
node_network_transmit_bytes_total{device="eth0"} 0
# TYPE node_boot_time_seconds gauge
node_boot_time_seconds 1.7645e+09
# TYPE node_uname_info gauge
node_uname_info{domainname="(none)",machine="x86_64",nodename="db1",release="6.1.0",sysname="Linux",version="#1 SMP"} 1
# TYPE node_time_seconds gauge
node_time_seconds ` + nodeTime + `
`
}

func mustParse(t *testing.T, b string, at time.Time) Reading {
	t.Helper()
	r, err := Parse([]byte(b), expfmt.FmtText, at)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestBetweenMakesRatesAndSaysWhatIsAbsent(t *testing.T) {
	t0 := time.Unix(1000, 0)
	prev := mustParse(t, body("100", "50", "1000", "5", "0", "1000.25"), t0)
	cur := mustParse(t, body("101", "52", "1400", "7", "4000", "1002.25"), t0.Add(2*time.Second))
	if cur.Nodename != "db1" || cur.Machine != "x86_64" {
		t.Errorf("uname: %q %q, want db1 x86_64", cur.Nodename, cur.Machine)
	}
	f := Between("db.1", prev, cur)
	h := func(fig string) string { return result.HostName("db.1", fig) }
	d := func(fig string) string { return result.HostDiskName("db.1", "vda", fig) }
	for name, want := range map[string]float64{
		// cpu0 moved 1 idle + 2 user: busy 2/3.
		h(result.HostCPUBusy): 2.0 / 3, h(result.HostCPUIOWait): 0, h(result.HostCPUSteal): 0,
		h(result.HostCPUs): 2, h(result.HostRunQueue): 3, h(result.HostMemTotal): 2.5e10, h(result.HostMemAvailable): 1.2e10,
		h(result.HostScrapeOffsetS): 0.25, h(result.HostBootTime): 1.7645e9,
		d(result.DiskIOPS): 200, d(result.DiskUtil): 1, d(result.DiskAwaitMs): 0, d(result.DiskReadMBps): 0,
		h(result.HostNetRxBPS): 2000, h(result.HostNetTxBPS): 0,
	} {
		got, ok := f.Values[name]
		if !ok || abs(got-want) > 1e-9 {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	for name, why := range map[string]string{
		h(result.HostMemPageCache): "node_memory_Cached_bytes",
		d(result.DiskQueue):        "node_disk_io_time_weighted_seconds_total",
		h(result.HostNetErrors):    "node_network_receive_errs_total",
		h(result.HostCPUPressure):  "node_pressure_cpu_waiting_seconds_total",
	} {
		if _, ok := f.Values[name]; ok {
			t.Errorf("%s present without its series", name)
		}
		if !strings.Contains(f.Absent[name], why) {
			t.Errorf("%s absent because %q, want it to name %s", name, f.Absent[name], why)
		}
	}
}

func TestBetweenCountersBackwardsAndNoInterval(t *testing.T) {
	t0 := time.Unix(1000, 0)
	prev := mustParse(t, body("100", "50", "1000", "5", "100", "1000"), t0)
	reset := mustParse(t, body("1", "1", "10", "0", "0", "1001"), t0.Add(time.Second))
	f := Between("n", prev, reset)
	if v := f.Values[result.HostDiskName("n", "vda", result.DiskIOPS)]; v != 0 {
		t.Errorf("IOPS over a counter reset = %v, want 0 (nothing counted)", v)
	}
	if _, ok := f.Values[result.HostName("n", result.HostCPUBusy)]; ok {
		t.Error("CPU busy made of counters that all went backwards")
	}
	same := Between("n", prev, prev)
	if _, ok := same.Values[result.HostName("n", result.HostCPUBusy)]; ok || same.Absent[result.HostName("n", result.HostCPUBusy)] == "" {
		t.Errorf("a rate made of one moment: %v / %q", same.Values, same.Absent)
	}
	if same.Values[result.HostName("n", result.HostMemTotal)] != 2.5e10 {
		t.Error("gauges of one reading left out")
	}
}

// CPU pressure is a counter over the interval: its share of the interval's seconds, capped
// at 1 (the counter and the readings' times are not read at one instant).
func TestBetweenCPUPressure(t *testing.T) {
	t0 := time.Unix(1000, 0)
	waiting := func(v string) string {
		return "# TYPE node_pressure_cpu_waiting_seconds_total counter\nnode_pressure_cpu_waiting_seconds_total " + v + "\n"
	}
	b := body("100", "50", "1000", "5", "0", "1000")
	prev := mustParse(t, b+waiting("10"), t0)
	name := result.HostName("n", result.HostCPUPressure)
	for _, c := range []struct {
		total string
		want  float64
	}{{"11.5", 0.75}, {"13", 1}, {"10", 0}} {
		f := Between("n", prev, mustParse(t, b+waiting(c.total), t0.Add(2*time.Second)))
		if got, ok := f.Values[name]; !ok || abs(got-c.want) > 1e-9 {
			t.Errorf("waiting 10 -> %s over 2 s: %v (present %v, %q), want %v", c.total, got, ok, f.Absent[name], c.want)
		}
	}
	f := Between("n", mustParse(t, b, t0), mustParse(t, b+waiting("11"), t0.Add(time.Second)))
	if _, ok := f.Values[name]; ok || !strings.Contains(f.Absent[name], "no PSI") {
		t.Errorf("pressure made of one reading: %v / %q", f.Values[name], f.Absent[name])
	}
}

func TestParseRefusesWhatIsNotAnExporter(t *testing.T) {
	for _, b := range []string{"", "<html><body>Node Exporter</body></html>", "# TYPE go_goroutines gauge\ngo_goroutines 7\n", "node_cpu_seconds_total{cpu=\"0\" 1\n"} {
		if _, err := Parse([]byte(b), expfmt.FmtText, time.Now()); err == nil {
			t.Errorf("Parse(%q) took it", b)
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// A node in a control group of its own on a host with an exporter has both samplers'
// figures: none of the exporter's may take the name of a modelled host's figure, or the
// whole host's page cache (gigabytes) would stand for the group's (its budget's share).
func TestExporterFiguresNeverTakeAModelledHostsName(t *testing.T) {
	t0 := time.Unix(1000, 0)
	prev := mustParse(t, body("100", "50", "1000", "5", "0", "1000.25"), t0)
	cur := mustParse(t, body("101", "52", "1400", "7", "4000", "1002.25"), t0.Add(2*time.Second))
	f := Between("n", prev, cur)
	modelled := map[string]bool{result.HostCPUCores: true, result.HostCPUBudget: true, result.HostCPUOfBudget: true,
		result.HostThrottledShare: true, result.HostThrottledSec: true, result.HostMemoryBytes: true,
		result.HostPageCacheBytes: true, result.HostMemoryBudget: true}
	for _, names := range []map[string]string{f.Units, f.Absent} {
		for name := range names {
			if _, fig, ok := result.ParseHostName(name); ok && modelled[fig] {
				t.Errorf("the exporter's figure %s is named as a modelled host's", name)
			}
		}
	}
}

// Interfaces come and go (a container's veth, another cluster's bridge): one that went
// between two readings takes nothing away, and one that came adds nothing, where a sum
// over the interfaces would fall to "nothing moved" or jump by the newcomer's whole count.
func TestNetCountsOnlyInterfacesInBothReadings(t *testing.T) {
	t0 := time.Unix(1000, 0)
	base := body("100", "50", "1000", "5", "1000", "1000")
	prev := mustParse(t, base+"node_network_receive_bytes_total{device=\"veth1\"} 5e+08\n", t0)
	cur := mustParse(t, body("101", "52", "1400", "7", "3000", "1002")+"node_network_receive_bytes_total{device=\"br9\"} 7e+08\n", t0.Add(2*time.Second))
	f := Between("n", prev, cur)
	if got := f.Values[result.HostName("n", result.HostNetRxBPS)]; got != 1000 {
		t.Errorf("receive %v B/s with veth1 gone and br9 new; want eth0's 2000 bytes over 2 s, 1000", got)
	}
}
