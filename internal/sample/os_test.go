package sample

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/proc"
)

const diskstatsNew = `   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 254       0 vda 31830 5519 1758634 21977 9159 12025 1064648 4680 0 12204 26920 4647 27 253248 239 929 22
 254       1 vda1 100 0 800 10 0 0 0 0 0 10 10
`

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func TestDiskDeltaAsIostat(t *testing.T) {
	prev := proc.DiskCounters{Name: "sda", Reads: 1000, SectorsRead: 8000, ReadMs: 500, Writes: 50, SectorsWrite: 100, WriteMs: 40, IOMs: 10000, WeightedIOMs: 20000}
	cur := prev
	cur.Reads += 200        // 100 reads/s over 2 s
	cur.SectorsRead += 4000 // 2,048,000 bytes -> 1.024 MB/s
	cur.ReadMs += 100       // 0.5 ms per read
	cur.Writes += 200
	cur.SectorsWrite += 2000
	cur.WriteMs += 300 // 1.5 ms per write
	cur.IOMs += 1500   // busy 75% of 2000 ms
	cur.WeightedIOMs += 3000
	r := DiskDelta(prev, cur, 2)
	near(t, "ReadIOPS", r.ReadIOPS, 100)
	near(t, "IOPS", r.IOPS(), 200)
	near(t, "ReadMBps", r.ReadMBps, 1.024)
	near(t, "MBps", r.MBps(), 1.536)
	near(t, "ReadAwait", r.ReadAwait, 0.5)
	near(t, "WriteAwait", r.WriteAwait, 1.5)
	near(t, "AwaitMs", r.AwaitMs, 1.0)
	near(t, "AvgQueue", r.AvgQueue, 1.5)
	near(t, "Util", r.Util, 0.75)

	back := DiskDelta(cur, prev, 2) // counters reset: no negative rates
	if back.IOPS() != 0 || back.Util != 0 || back.AwaitMs != 0 {
		t.Errorf("backwards counters gave %+v", back)
	}
	if z := DiskDelta(prev, cur, 0); z.IOPS() != 0 {
		t.Errorf("zero interval gave %+v", z)
	}
}

// fakeSys builds sysfs's dev/block links for a disk sda (8:0) with partition sda1 (8:1)
// and a device-mapper volume dm-0 (253:0).
func fakeSys(t *testing.T) string {
	root := t.TempDir()
	disk := filepath.Join(root, "devices", "pci0000:00", "block", "sda")
	part := filepath.Join(disk, "sda1")
	dm := filepath.Join(root, "devices", "virtual", "block", "dm-0")
	for _, d := range []string{part, dm, filepath.Join(root, "dev", "block")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for file, text := range map[string]string{filepath.Join(part, "partition"): "1\n", filepath.Join(disk, "dev"): "8:0\n",
		filepath.Join(part, "dev"): "8:1\n", filepath.Join(dm, "dev"): "253:0\n"} {
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{"8:0": "../../devices/pci0000:00/block/sda", "8:1": "../../devices/pci0000:00/block/sda/sda1", "253:0": "../../devices/virtual/block/dm-0"}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, "dev", "block", name)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestBlockDevice(t *testing.T) {
	sys := fakeSys(t)
	for _, c := range []struct {
		maj, min uint32
		want     string
	}{{8, 0, "sda"}, {8, 1, "sda"}, {253, 0, "dm-0"}} {
		got, err := BlockDevice(sys, c.maj, c.min)
		if err != nil || got != c.want {
			t.Errorf("BlockDevice(%d:%d) = %q, %v; want %q", c.maj, c.min, got, err, c.want)
		}
	}
	if _, err := BlockDevice(sys, 0, 42); !errors.Is(err, ErrNoBlockDevice) {
		t.Errorf("0:42 (tmpfs, overlay) gave %v, want ErrNoBlockDevice", err)
	}
}

// On this machine: the device behind a temporary folder is a whole disk in /proc/diskstats,
// or there is none (tmpfs, overlay).
func TestDeviceForPathOnThisMachine(t *testing.T) {
	dev, err := DeviceForPath("/sys", t.TempDir())
	if errors.Is(err, ErrNoBlockDevice) {
		t.Skipf("no block device under the temporary folder: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	m, err := proc.Host.Diskstats()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m[dev]; !ok {
		t.Errorf("device %q is not in /proc/diskstats", dev)
	}
	if _, err := os.Stat(filepath.Join("/sys/block", dev)); err != nil {
		t.Errorf("%q is not a whole disk: %v", dev, err)
	}
}

func TestCPUDelta(t *testing.T) {
	a := proc.CPUTicks{User: 100, System: 50, Idle: 800, IOWait: 20, IRQ: 5, SoftIRQ: 5, Steal: 20}
	b := proc.CPUTicks{User: 200, Nice: 100, System: 100, Idle: 1400, IOWait: 120, IRQ: 10, SoftIRQ: 10, Steal: 60}
	s := CPUDelta(a, b) // deltas: user+nice 200, sys 50, idle 600, iowait 100, irq 10, steal 40 = 1000
	near(t, "User", s.User, 0.2)
	near(t, "System", s.System, 0.05)
	near(t, "Idle", s.Idle, 0.6)
	near(t, "IOWait", s.IOWait, 0.1)
	near(t, "IRQ", s.IRQ, 0.01)
	near(t, "Steal", s.Steal, 0.04)
	near(t, "Busy", s.Busy(), 0.26)
	if z := CPUDelta(a, a); z != (CPUShares{}) {
		t.Errorf("no time passed gave %+v", z)
	}
}

func TestPressureDelta(t *testing.T) {
	a := proc.PressureTotals{Some: 8461908, Full: 8261183, HasFull: true}
	b := proc.PressureTotals{Some: a.Some + 250000, Full: a.Full + 100000, HasFull: true}
	s := PressureDelta(a, b, 0.5)
	near(t, "Some", s.Some, 0.5)
	near(t, "Full", s.Full, 0.2)
}

func TestNetDelta(t *testing.T) {
	r := NetDelta("lo", proc.NetCounters{RxBytes: 0, TxBytes: 0, RxPackets: 0}, proc.NetCounters{RxBytes: 4e6, TxBytes: 2e6, RxPackets: 100}, 2)
	near(t, "RxMBps", r.RxMBps, 2)
	near(t, "TxMBps", r.TxMBps, 1)
	near(t, "RxPackets", r.RxPackets, 50)
}

func TestDeltaOfReadings(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	prev := osReading{at: t0, ncpu: 2,
		disks:    map[string]proc.DiskCounters{"sda": {Name: "sda", Reads: 10}},
		net:      map[string]proc.NetCounters{"lo": {RxBytes: 0}},
		pressure: map[string]proc.PressureTotals{"io": {Some: 0}},
		self:     time.Second}
	cur := osReading{at: t0.Add(2 * time.Second), ncpu: 2,
		disks:    map[string]proc.DiskCounters{"sda": {Name: "sda", Reads: 30}},
		net:      map[string]proc.NetCounters{"lo": {RxBytes: 2e6}, "new0": {}},
		pressure: map[string]proc.PressureTotals{"io": {Some: 1e6}},
		self:     2 * time.Second}
	s := delta(prev, cur, []string{"sda"})
	near(t, "Seconds", s.Seconds, 2)
	d, ok := s.Disk("sda")
	if !ok {
		t.Fatal("no sda rates")
	}
	near(t, "sda IOPS", d.IOPS(), 10)
	if len(s.Net) != 1 || s.Net[0].Iface != "lo" {
		t.Errorf("Net = %+v; want only lo (new0 has no previous reading)", s.Net)
	}
	near(t, "lo RxMBps", s.Net[0].RxMBps, 1)
	near(t, "io pressure", s.Pressure["io"].Some, 0.5)
	near(t, "SelfCores", s.SelfCores, 0.5)
	near(t, "SelfShare", s.SelfShare, 0.25)
}

// The sampler on this machine's real /proc: shares add up, our own CPU shows.
func TestOSSamplerOnThisMachine(t *testing.T) {
	if _, err := os.Stat("/proc/diskstats"); err != nil {
		t.Skip("no /proc/diskstats")
	}
	s, err := NewOS(OSConfig{Paths: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(200 * time.Millisecond)
	x := 0.0
	for time.Now().Before(deadline) {
		x += math.Sqrt(x + 1)
	}
	smp, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	c := smp.CPU
	if sum := c.User + c.System + c.IOWait + c.IRQ + c.Steal + c.Idle; sum != 0 && math.Abs(sum-1) > 1e-6 {
		t.Errorf("CPU shares add up to %v: %+v", sum, c)
	}
	if smp.SelfCores <= 0 || smp.NCPU < 1 {
		t.Errorf("busy loop not seen: self %v cores, %d CPUs (x=%v)", smp.SelfCores, smp.NCPU, x)
	}
	if len(smp.Disks) != len(s.Devices()) {
		t.Errorf("%d disk rates for devices %v", len(smp.Disks), s.Devices())
	}
}

func TestOSSamplerMissingDevice(t *testing.T) {
	if _, err := NewOS(OSConfig{Devices: []string{"no-such-disk"}}); err == nil {
		t.Error("a device not in /proc/diskstats was accepted")
	}
}
