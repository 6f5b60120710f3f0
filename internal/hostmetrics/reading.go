package hostmetrics

import (
	"math"
	"time"

	"github.com/prometheus/common/model"
)

// The node_exporter series a Reading is made of (node_exporter 1.x names; the collectors
// cpu, stat, meminfo, diskstats, netdev and time).
const (
	metricCPU          = "node_cpu_seconds_total"
	metricProcsRunning = "node_procs_running"
	metricMemTotal     = "node_memory_MemTotal_bytes"
	metricMemAvailable = "node_memory_MemAvailable_bytes"
	metricMemCached    = "node_memory_Cached_bytes"
	metricTime         = "node_time_seconds"
	// metricBootTime tells hosts apart: exporters that agree on it read one machine's
	// counters (network namespaces of one machine share its /proc).
	metricBootTime = "node_boot_time_seconds"
	// metricUname names the machine (its labels nodename and machine): with the boot time,
	// what tells one machine from another (the uname collector; absent when it is off).
	metricUname = "node_uname_info"

	metricDiskReads       = "node_disk_reads_completed_total"
	metricDiskWrites      = "node_disk_writes_completed_total"
	metricDiskReadBytes   = "node_disk_read_bytes_total"
	metricDiskWriteBytes  = "node_disk_written_bytes_total"
	metricDiskReadTime    = "node_disk_read_time_seconds_total"
	metricDiskWriteTime   = "node_disk_write_time_seconds_total"
	metricDiskIOTime      = "node_disk_io_time_seconds_total"
	metricDiskWeightedIOT = "node_disk_io_time_weighted_seconds_total"

	// metricCPUWaiting is CPU pressure (PSI's cpu "some" total, the pressure collector):
	// seconds in which some runnable task waited for a CPU. Unlike node_procs_running, an
	// instant at the scrape that counts the exporter's own threads, a counter over the
	// whole interval. Absent on kernels without PSI.
	metricCPUWaiting = "node_pressure_cpu_waiting_seconds_total"

	metricNetRxBytes = "node_network_receive_bytes_total"
	metricNetTxBytes = "node_network_transmit_bytes_total"
	metricNetRxErrs  = "node_network_receive_errs_total"
	metricNetTxErrs  = "node_network_transmit_errs_total"
	metricNetRxDrop  = "node_network_receive_drop_total"
	metricNetTxDrop  = "node_network_transmit_drop_total"
)

// Metrics are the node_exporter series a Reading uses: a Prometheus server is asked for
// these only.
var Metrics = []string{metricCPU, metricProcsRunning, metricCPUWaiting, metricMemTotal, metricMemAvailable, metricMemCached, metricTime, metricBootTime, metricUname,
	metricDiskReads, metricDiskWrites, metricDiskReadBytes, metricDiskWriteBytes, metricDiskReadTime, metricDiskWriteTime,
	metricDiskIOTime, metricDiskWeightedIOT,
	metricNetRxBytes, metricNetTxBytes, metricNetRxErrs, metricNetTxErrs, metricNetRxDrop, metricNetTxDrop}

// Reading is a host's counters at one moment, as its node_exporter reported them. A
// series the exporter did not report is missing from its map (never 0).
type Reading struct {
	// At is when the counters were read, on agbench's clock: the midpoint of a direct
	// scrape's request and answer, or a Prometheus server's scrape time moved by its clock's
	// offset.
	At time.Time
	// ClockOffset is the exporter's clock (node_time_seconds) minus agbench's at the
	// scrape, in seconds; nil when the exporter did not report its time.
	ClockOffset *float64
	// CPUMode is CPU seconds by mode (user, system, idle, iowait, steal ...), summed over
	// the host's CPUs; CPUs counts those CPUs.
	CPUMode map[string]float64
	CPUs    int
	// Gauges are node_procs_running, node_boot_time_seconds and the node_memory_* series,
	// by metric name.
	Gauges map[string]float64
	// CPUWaiting is node_pressure_cpu_waiting_seconds_total; nil when not reported.
	CPUWaiting *float64
	// Disks are each device's node_disk_* counters, by device, then metric name.
	Disks map[string]map[string]float64
	// Nodename and Machine are node_uname_info's labels of those names (the kernel's
	// hostname, as the exporter's UTS namespace has it, and its architecture); "" when the
	// exporter did not report it.
	Nodename, Machine string
	// Net are the node_network_* counters of every interface but loopback, by metric name,
	// then interface: kept apart, as interfaces come and go (a container's veth) and a sum
	// over them would fall or jump when one does.
	Net map[string]map[string]float64

	nodeTime *float64
	cpus     map[string]bool
}

func newReading() Reading {
	return Reading{CPUMode: map[string]float64{}, Gauges: map[string]float64{}, Disks: map[string]map[string]float64{},
		Net: map[string]map[string]float64{}, cpus: map[string]bool{}}
}

// add takes in one sample of a series; series a Reading does not use, and values that
// are not finite, are left out.
func (r *Reading) add(m model.Metric, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	name := string(m[model.MetricNameLabel])
	switch name {
	case metricCPU:
		r.CPUMode[string(m["mode"])] += v
		r.cpus[string(m["cpu"])] = true
		r.CPUs = len(r.cpus)
	case metricProcsRunning, metricMemTotal, metricMemAvailable, metricMemCached, metricBootTime:
		r.Gauges[name] = v
	case metricTime:
		r.nodeTime = &v
	case metricCPUWaiting:
		r.CPUWaiting = &v
	case metricUname:
		r.Nodename, r.Machine = string(m["nodename"]), string(m["machine"])
	case metricDiskReads, metricDiskWrites, metricDiskReadBytes, metricDiskWriteBytes, metricDiskReadTime,
		metricDiskWriteTime, metricDiskIOTime, metricDiskWeightedIOT:
		dev := string(m["device"])
		if dev == "" {
			return
		}
		if r.Disks[dev] == nil {
			r.Disks[dev] = map[string]float64{}
		}
		r.Disks[dev][name] = v
	case metricNetRxBytes, metricNetTxBytes, metricNetRxErrs, metricNetTxErrs, metricNetRxDrop, metricNetTxDrop:
		dev := string(m["device"])
		if dev == "lo" {
			return
		}
		if r.Net[name] == nil {
			r.Net[name] = map[string]float64{}
		}
		r.Net[name][dev] = v
	}
}

// fromVector makes a Reading of samples read at at, on agbench's clock. Samples without
// node_cpu_seconds_total are not a node_exporter's: ErrNotExporter.
func fromVector(v model.Vector, at time.Time) (Reading, error) {
	r := newReading()
	r.At = at
	for _, s := range v {
		r.add(s.Metric, float64(s.Value))
	}
	if len(r.CPUMode) == 0 {
		return Reading{}, ErrNotExporter
	}
	if r.nodeTime != nil {
		off := *r.nodeTime - float64(at.UnixNano())/1e9
		r.ClockOffset = &off
	}
	return r, nil
}
