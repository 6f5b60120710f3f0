package diskio

import (
	"fmt"
	"os"
	"testing"
)

const diskstatsSample = ` 254       0 vda 31830 5519 1758634 21977 9158 12025 1064640 4680 0 12204 26920 4645 27 253232 239 929 22
 254       1 vda1 100 0 800 5 0 0 0 0 0 4 5
 253       0 zram0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
   7       0 loop0 x 0 0 0 0 0 0 0 0 0 0
 short line
`

func TestParseDiskstats(t *testing.T) {
	m := ParseDiskstats([]byte(diskstatsSample))
	v, ok := m["vda"]
	if !ok || len(m) != 3 {
		t.Fatalf("parsed %v", m)
	}
	want := DiskStat{Major: 254, Minor: 0, Name: "vda", ReadIOs: 31830, ReadMerges: 5519, ReadSectors: 1758634, ReadTicks: 21977,
		WriteIOs: 9158, WriteMerges: 12025, WriteSectors: 1064640, WriteTicks: 4680, InFlight: 0, IOTicks: 12204, TimeInQueue: 26920}
	if v != want {
		t.Fatalf("vda = %+v\nwant  %+v", v, want)
	}
	if m["vda1"].ReadSectors != 800 || m["vda1"].Minor != 1 {
		t.Fatalf("vda1 = %+v", m["vda1"])
	}
}

func TestParsePressureAndStat(t *testing.T) {
	p, err := ParsePressure([]byte("some avg10=0.00 avg60=0.11 avg300=0.95 total=8461808\nfull avg10=0.00 avg60=0.10 avg300=0.91 total=8261143\n"))
	if err != nil || p.SomeTotal != 8461808 || p.FullTotal != 8261143 || !p.HasFull {
		t.Fatalf("%+v %v", p, err)
	}
	if _, err := ParsePressure([]byte("full total=1\n")); err == nil {
		t.Fatal("no some line accepted")
	}
	if _, err := ParsePressure([]byte("some total=x\n")); err == nil {
		t.Fatal("bad total accepted")
	}
	c, err := ParseCPUStat([]byte("cpu  10 1 20 300 4 5 6 7 0 0\ncpu0 1 1 1 1 1 1 1 1\nintr 1\n"))
	if err != nil || c != (CPUStat{10, 1, 20, 300, 4, 5, 6, 7}) || c.Total() != 353 {
		t.Fatalf("%+v %v", c, err)
	}
	if _, err := ParseCPUStat([]byte("cpu0 1 2 3 4\n")); err == nil {
		t.Fatal("no aggregate line accepted")
	}
}

// The real files parse too.
func TestParseLiveProc(t *testing.T) {
	for _, f := range []string{"/proc/diskstats", "/proc/stat"} {
		if _, err := os.Stat(f); err != nil {
			t.Skip("no /proc here")
		}
	}
	b, _ := os.ReadFile("/proc/diskstats")
	if len(ParseDiskstats(b)) == 0 {
		t.Fatal("no devices parsed from /proc/diskstats")
	}
	b, _ = os.ReadFile("/proc/stat")
	if c, err := ParseCPUStat(b); err != nil || c.Total() == 0 {
		t.Fatalf("%+v %v", c, err)
	}
}

func TestDeviceOfFindsParentDisk(t *testing.T) {
	// A fake /sys: 8:1 is partition sda1 of sda. The test file's own st_dev decides which
	// link is read, so build the fake for that.
	dir := t.TempDir()
	f := dir + "/f"
	os.WriteFile(f, nil, 0o644)
	d, err := DeviceOf(f, "/sys")
	if err != nil {
		t.Skipf("no block device behind %s: %v", dir, err)
	}
	sys := t.TempDir()
	real := sys + "/devices/pci0/block/sdz/sdz1"
	os.MkdirAll(real, 0o755)
	os.WriteFile(real+"/partition", []byte("1\n"), 0o644)
	os.WriteFile(sys+"/devices/pci0/block/sdz/dev", []byte("8:0\n"), 0o644)
	os.MkdirAll(sys+"/dev/block", 0o755)
	link := fmt.Sprintf("%s/dev/block/%d:%d", sys, d.Major, d.Minor)
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	got, err := DeviceOf(f, sys)
	if err != nil || got.Name != "sdz" || got.Partition != "sdz1" || got.Major != 8 || got.Minor != 0 {
		t.Fatalf("DeviceOf = %+v, %v", got, err)
	}
}

func FuzzParseDiskstats(f *testing.F) {
	f.Add([]byte(diskstatsSample))
	f.Add([]byte("8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for name, d := range ParseDiskstats(b) {
			if d.Name != name {
				t.Fatalf("name %q under key %q", d.Name, name)
			}
		}
	})
}

func FuzzParsePressure(f *testing.F) {
	f.Add([]byte("some avg10=0.00 avg60=0.11 avg300=0.95 total=8461808\nfull avg10=0.00 total=1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ParsePressure(b)
		ParseCPUStat(b)
	})
}
