package proc

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestReadsInFlight(t *testing.T) {
	if n, err := fixture.ReadsInFlight("vda"); err != nil || n != 0 {
		t.Errorf("fixture: %d, %v", n, err)
	}
	if _, err := fixture.ReadsInFlight("sdz"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no such device: %v, want a file that does not exist", err)
	}
	root := At(t.TempDir())
	if err := os.MkdirAll(root.Sys("block", "loop3"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root.Sys("block", "loop3"), "inflight"), []byte("       3        7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := root.ReadsInFlight("loop3"); err != nil || n != 3 {
		t.Errorf("3 reads, 7 writes: %d, %v", n, err)
	}
}

func TestParseInflight(t *testing.T) {
	if r, w, err := ParseInflight([]byte("       3        7\n")); err != nil || r != 3 || w != 7 {
		t.Errorf("%d %d %v", r, w, err)
	}
	for _, bad := range []string{"", "3", "3 x", "-1 0", "1 2 3", "x 1"} {
		if r, w, err := ParseInflight([]byte(bad)); err == nil {
			t.Errorf("ParseInflight(%q) = %d, %d, no error", bad, r, w)
		}
	}
}

// sysBlockTree lays out /sys/dev/block and the device folders its links point to as the
// kernel does (a virtio disk, a device-mapper disk, and a disk with a partition), under a
// temporary root: the kernel names the links major:minor, a name the repository's files
// avoid.
func sysBlockTree(t *testing.T) FS {
	t.Helper()
	root := At(t.TempDir())
	devs := map[string]string{ // link -> the device's folder under /sys/devices
		"254:0": "pci0000:00/0000:00:02.0/virtio1/block/vda",
		"253:0": "virtual/block/dm-0",
		"8:0":   "pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda",
		"8:2":   "pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda/sda2",
	}
	if err := os.MkdirAll(root.Sys("dev", "block"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, dir := range devs {
		full := root.Sys("devices", dir)
		if err := os.MkdirAll(full, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(full, "dev"), []byte(link+"\n"), 0o444); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..", "..", "devices", dir), root.Sys("dev", "block", link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(root.Sys("devices", devs["8:2"], "partition"), []byte("2\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	return root
}

// A partition's disk is the folder above it, as the IO controllers and /proc/diskstats
// want it; any other device is a disk of its own.
func TestWholeDisk(t *testing.T) {
	sys := sysBlockTree(t)
	for _, c := range []struct {
		major, minor uint32
		want         BlockDisk
	}{{8, 2, BlockDisk{8, 0, "sda"}}, {8, 0, BlockDisk{8, 0, "sda"}}, {253, 0, BlockDisk{253, 0, "dm-0"}}, {254, 0, BlockDisk{254, 0, "vda"}}} {
		d, err := sys.WholeDisk(c.major, c.minor)
		if err != nil || d != c.want {
			t.Errorf("%d:%d: %+v %v, want %+v", c.major, c.minor, d, err, c.want)
		}
	}
	if _, err := sys.WholeDisk(9, 9); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing device: %v, want os.ErrNotExist", err)
	}
	// A partition whose disk cannot be read is an error, not "no such device".
	if err := os.Remove(sys.Sys("devices", "pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda", "dev")); err != nil {
		t.Fatal(err)
	}
	if _, err := sys.WholeDisk(8, 2); err == nil || errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a partition of an unreadable disk: %v", err)
	}
}

// The machine's own disks resolve to disks that /sys/block lists.
func TestWholeDiskOfTheMachine(t *testing.T) {
	links, err := os.ReadDir("/sys/dev/block")
	if err != nil || len(links) == 0 {
		t.Skipf("no /sys/dev/block here: %v", err)
	}
	for _, l := range links {
		major, minor, err := ParseDevNumber(l.Name())
		if err != nil {
			t.Fatalf("%s: %v", l.Name(), err)
		}
		d, err := Host.WholeDisk(major, minor)
		if err != nil {
			t.Fatalf("%s: %v", l.Name(), err)
		}
		if _, err := os.Stat(filepath.Join("/sys/block", d.Name)); err != nil {
			t.Errorf("%s: disk %s is not in /sys/block: %v", l.Name(), d.Name, err)
		}
	}
}

func TestParseDevNumber(t *testing.T) {
	if ma, mi, err := ParseDevNumber("254:16"); err != nil || ma != 254 || mi != 16 {
		t.Errorf("254:16: %d %d %v", ma, mi, err)
	}
	for _, bad := range []string{"", "8", "8:", ":0", "8:x", "-1:0", "8:0:1", "99999999999:0"} {
		if _, _, err := ParseDevNumber(bad); err == nil {
			t.Errorf("ParseDevNumber(%q): no error", bad)
		}
	}
}
