package proc

import "github.com/prometheus/procfs/blockdevice"

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

// Diskstats reads /proc/diskstats into counters by device name.
//
// Through procfs's blockdevice.ProcDiskstats: it reads the 14 fields of old kernels and
// the discard and flush fields of newer ones, in the kernel's units (sectors of 512 bytes,
// milliseconds), which is what agbench keeps. It leaves out a line of fewer than 14 fields,
// so a device on such a line is missing, not zero.
func (f FS) Diskstats() (map[string]DiskCounters, error) {
	fs, err := blockdevice.NewFS(f.Proc(), f.Sys())
	if err != nil {
		return nil, err
	}
	lines, err := fs.ProcDiskstats()
	if err != nil {
		return nil, err
	}
	out := make(map[string]DiskCounters, len(lines))
	for _, d := range lines {
		out[d.DeviceName] = DiskCounters{
			Major: d.MajorNumber, Minor: d.MinorNumber, Name: d.DeviceName,
			Reads: d.ReadIOs, ReadsMerged: d.ReadMerges, SectorsRead: d.ReadSectors, ReadMs: d.ReadTicks,
			Writes: d.WriteIOs, WritesMerged: d.WriteMerges, SectorsWrite: d.WriteSectors, WriteMs: d.WriteTicks,
			InFlight: d.IOsInProgress, IOMs: d.IOsTotalTicks, WeightedIOMs: d.WeightedIOTicks,
			Discards: d.DiscardIOs, SectorsDiscrd: d.DiscardSectors, DiscardMs: d.DiscardTicks,
			Flushes: d.FlushRequestsCompleted, FlushMs: d.TimeSpentFlushing,
		}
	}
	return out, nil
}
