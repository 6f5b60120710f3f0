package proc

import (
	"errors"
	"os"
	"testing"
)

func TestDiskstats(t *testing.T) {
	m, err := fixture.Diskstats()
	if err != nil || len(m) != 10 {
		t.Fatalf("fixture: %d devices, %v; want 10", len(m), err)
	}
	want := DiskCounters{Major: 254, Name: "vda", Reads: 370498, ReadsMerged: 8800, SectorsRead: 9001610, ReadMs: 36892,
		Writes: 297778, WritesMerged: 95269, SectorsWrite: 35056960, WriteMs: 89655, IOMs: 27824, WeightedIOMs: 136553,
		Discards: 84348, SectorsDiscrd: 13991856, DiscardMs: 6137, Flushes: 108558, FlushMs: 3868}
	if m["vda"] != want {
		t.Errorf("vda: %+v\nwant %+v", m["vda"], want)
	}
	// A kernel before 4.18 writes 14 fields: no discards nor flushes.
	m, err = rootWith(t, "diskstats", " 254       1 vda1 100 0 800 10 0 0 0 0 2 10 11\n").Diskstats()
	if want := (DiskCounters{Major: 254, Minor: 1, Name: "vda1", Reads: 100, SectorsRead: 800, ReadMs: 10, InFlight: 2, IOMs: 10, WeightedIOMs: 11}); err != nil || m["vda1"] != want {
		t.Errorf("old kernel: %+v, %v; want %+v", m["vda1"], err, want)
	}
	// A short line is left out: its device is missing, never zero.
	if m, err := rootWith(t, "diskstats", "8 0 sda 1 2 3\n").Diskstats(); err != nil || len(m) != 0 {
		t.Errorf("short line: %+v, %v", m, err)
	}
	for _, bad := range []string{"8 0 sda 1 2 3 4 5 6 7 8 9 10 x\n", "x 0 sda 1 2 3 4 5 6 7 8 9 10 11\n"} {
		if m, err := rootWith(t, "diskstats", bad).Diskstats(); err == nil {
			t.Errorf("diskstats %q: %+v, no error", bad, m)
		}
	}
	if _, err := rootWith(t, "stat", "").Diskstats(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no /proc/diskstats: %v, want a file that does not exist", err)
	}
}
