package sample

import "github.com/agbench/agbench/internal/proc"

// DiskRates are one device's rates over an interval, as iostat -x computes them.
type DiskRates struct {
	Device     string  `json:"device"`
	ReadIOPS   float64 `json:"read_iops"`
	WriteIOPS  float64 `json:"write_iops"`
	ReadMBps   float64 `json:"read_mbps"`  // 10^6 bytes per second
	WriteMBps  float64 `json:"write_mbps"` // 10^6 bytes per second
	AwaitMs    float64 `json:"await_ms"`   // mean time per completed read or write, queue included
	ReadAwait  float64 `json:"read_await_ms"`
	WriteAwait float64 `json:"write_await_ms"`
	AvgQueue   float64 `json:"avg_queue"` // mean number of requests in flight (aqu-sz)
	Util       float64 `json:"util"`      // share of the interval with IO in flight, 0..1
}

// IOPS is reads plus writes per second.
func (r DiskRates) IOPS() float64 { return r.ReadIOPS + r.WriteIOPS }

// MBps is bytes read plus written, in 10^6 bytes per second.
func (r DiskRates) MBps() float64 { return r.ReadMBps + r.WriteMBps }

// DiskDelta turns two readings of one device, seconds apart, into rates. A counter that went
// backwards (device re-created) counts as zero.
func DiskDelta(prev, cur proc.DiskCounters, seconds float64) DiskRates {
	r := DiskRates{Device: cur.Name}
	if seconds <= 0 {
		return r
	}
	reads, writes := sub(cur.Reads, prev.Reads), sub(cur.Writes, prev.Writes)
	rms, wms := sub(cur.ReadMs, prev.ReadMs), sub(cur.WriteMs, prev.WriteMs)
	r.ReadIOPS = float64(reads) / seconds
	r.WriteIOPS = float64(writes) / seconds
	r.ReadMBps = float64(sub(cur.SectorsRead, prev.SectorsRead)) * proc.SectorBytes / seconds / 1e6
	r.WriteMBps = float64(sub(cur.SectorsWrite, prev.SectorsWrite)) * proc.SectorBytes / seconds / 1e6
	r.ReadAwait = ratio(float64(rms), float64(reads))
	r.WriteAwait = ratio(float64(wms), float64(writes))
	r.AwaitMs = ratio(float64(rms+wms), float64(reads+writes))
	ms := seconds * 1000
	r.AvgQueue = float64(sub(cur.WeightedIOMs, prev.WeightedIOMs)) / ms
	r.Util = min(float64(sub(cur.IOMs, prev.IOMs))/ms, 1)
	return r
}

func sub(cur, prev uint64) uint64 {
	if cur < prev {
		return 0
	}
	return cur - prev
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
