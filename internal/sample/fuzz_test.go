package sample

import (
	"testing"

	"github.com/agbench/agbench/internal/proc"
)

// FuzzDiskDelta: any two readings a second apart give rates in range.
func FuzzDiskDelta(f *testing.F) {
	f.Add(uint64(100), uint64(800), uint64(10), uint64(5), uint64(7), uint64(900), uint64(20), uint64(2000))
	f.Fuzz(func(t *testing.T, reads, sectors, readMs, writes, writeMs, ioMs, weighted, later uint64) {
		prev := proc.DiskCounters{Name: "sda", Reads: reads, SectorsRead: sectors, ReadMs: readMs, Writes: writes,
			WriteMs: writeMs, IOMs: ioMs, WeightedIOMs: weighted}
		cur := prev
		cur.Reads, cur.ReadMs, cur.IOMs, cur.WeightedIOMs = reads+later%1000, readMs+later%700, ioMs+later%1000, weighted+later
		r := DiskDelta(prev, cur, 1)
		if r.Util < 0 || r.Util > 1 || r.AvgQueue < 0 || r.AwaitMs < 0 {
			t.Fatalf("rates out of range: %+v", r)
		}
	})
}
