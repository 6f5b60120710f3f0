package sample

import (
	"bytes"
	"fmt"
	"strconv"
)

// SectorBytes is the unit of the sector counters of /proc/diskstats: always 512 bytes,
// whatever the device's own sector size (Documentation/admin-guide/iostats.rst).
const SectorBytes = 512

// DiskCounters is one device's line of /proc/diskstats: cumulative counters since boot.
// Times are in milliseconds. Discard and flush fields are zero on kernels that lack them.
type DiskCounters struct {
	Major, Minor  uint32
	Name          string
	Reads         uint64 // reads completed
	ReadsMerged   uint64
	SectorsRead   uint64
	ReadMs        uint64 // time spent reading
	Writes        uint64 // writes completed
	WritesMerged  uint64
	SectorsWrite  uint64
	WriteMs       uint64
	InFlight      uint64 // IOs currently in progress (not a counter)
	IOMs          uint64 // time the device had IO in flight (busy time)
	WeightedIOMs  uint64 // busy time weighted by the number in flight
	Discards      uint64
	DiscardMs     uint64
	Flushes       uint64
	FlushMs       uint64
	SectorsDiscrd uint64
}

// ParseDiskstats parses the text of /proc/diskstats into counters by device name.
// Lines need at least the 14 fields of old kernels; more are read when present.
func ParseDiskstats(data []byte) (map[string]DiskCounters, error) {
	out := make(map[string]DiskCounters)
	for i, line := range bytes.Split(data, []byte{'\n'}) {
		f := bytes.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 14 {
			return nil, fmt.Errorf("diskstats line %d: %d fields, want at least 14", i+1, len(f))
		}
		var n [17]uint64
		for j := 0; j < len(n) && 3+j < len(f); j++ {
			v, err := strconv.ParseUint(string(f[3+j]), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("diskstats line %d field %d: %q is not a counter", i+1, 4+j, f[3+j])
			}
			n[j] = v
		}
		maj, err1 := strconv.ParseUint(string(f[0]), 10, 32)
		mnr, err2 := strconv.ParseUint(string(f[1]), 10, 32)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("diskstats line %d: bad device number %q:%q", i+1, f[0], f[1])
		}
		c := DiskCounters{
			Major: uint32(maj), Minor: uint32(mnr), Name: string(f[2]),
			Reads: n[0], ReadsMerged: n[1], SectorsRead: n[2], ReadMs: n[3],
			Writes: n[4], WritesMerged: n[5], SectorsWrite: n[6], WriteMs: n[7],
			InFlight: n[8], IOMs: n[9], WeightedIOMs: n[10],
			Discards: n[11], SectorsDiscrd: n[13], DiscardMs: n[14],
			Flushes: n[15], FlushMs: n[16],
		}
		out[c.Name] = c
	}
	return out, nil
}

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
func DiskDelta(prev, cur DiskCounters, seconds float64) DiskRates {
	r := DiskRates{Device: cur.Name}
	if seconds <= 0 {
		return r
	}
	reads, writes := sub(cur.Reads, prev.Reads), sub(cur.Writes, prev.Writes)
	rms, wms := sub(cur.ReadMs, prev.ReadMs), sub(cur.WriteMs, prev.WriteMs)
	r.ReadIOPS = float64(reads) / seconds
	r.WriteIOPS = float64(writes) / seconds
	r.ReadMBps = float64(sub(cur.SectorsRead, prev.SectorsRead)) * SectorBytes / seconds / 1e6
	r.WriteMBps = float64(sub(cur.SectorsWrite, prev.SectorsWrite)) * SectorBytes / seconds / 1e6
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
