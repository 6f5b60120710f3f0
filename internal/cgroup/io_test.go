package cgroup

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/agerr"
)

func TestLayoutFindsTheIOController(t *testing.T) {
	s, err := layout(mounts(t, v1Mountinfo), func(string) []string { return nil })
	if err != nil || s.IORoot != "/sys/fs/cgroup/blkio" || s.Roots["blkio"] != "" {
		t.Fatalf("%+v %v", s, err)
	}
	s, err = layout(mounts(t, strings.ReplaceAll(v1Mountinfo, "rw,blkio", "rw,pids")), func(string) []string { return nil })
	if err != nil || s.IORoot != "" {
		t.Fatalf("no blkio: %+v %v", s, err)
	}
	m := mounts(t, "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n")
	s, _ = layout(m, func(string) []string { return []string{"cpuset", "cpu", "io", "memory"} })
	if s.IORoot != "/sys/fs/cgroup" {
		t.Fatalf("v2 with io: %+v", s)
	}
	s, _ = layout(m, func(string) []string { return []string{"cpuset", "cpu", "memory"} })
	if s.IORoot != "" {
		t.Fatalf("v2 without io: %+v", s)
	}
}

func TestCheckIO(t *testing.T) {
	s := &System{Version: 1, CPUs: []int{0, 1}, IORoot: "/sys/fs/cgroup/blkio"}
	if err := s.Check(Budget{ReadBPS: 20 << 20, ReadIOPS: 500}, 2); err != nil {
		t.Fatal(err)
	}
	err := s.Check(Budget{ReadBPS: 100, WriteIOPS: -1, CPUShares: 1}, 2)
	for _, want := range []string{"--host-read-bps 100", "--host-write-iops -1", "--host-cpu-shares 1"} {
		if !agerr.IsBadInput(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q in %v", want, err)
		}
	}
	s.IORoot = ""
	err = s.Check(Budget{WriteBPS: 20 << 20}, 2)
	if !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "blkio") || !strings.Contains(err.Error(), "mount") {
		t.Fatalf("%v", err)
	}
	s.Version, s.Roots = 2, map[string]string{"cpu": "/sys/fs/cgroup"}
	err = s.Check(Budget{WriteBPS: 20 << 20}, 2)
	if !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "echo +io > /sys/fs/cgroup/cgroup.subtree_control") {
		t.Fatalf("%v", err)
	}
}

func TestParseIOLimits(t *testing.T) {
	for in, want := range map[string]int64{"20M": 20 << 20, "1.5M/s": 3 << 19, " 512K ": 512 << 10, "1G": 1 << 30} {
		if n, err := ParseBPS("--host-read-bps", in); err != nil || n != want {
			t.Errorf("%q: %d %v", in, n, err)
		}
	}
	for _, in := range []string{"", "20", "abc", "-1M", "100K", "20M/min"} {
		if _, err := ParseBPS("--host-read-bps", in); !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "--host-read-bps") {
			t.Errorf("%q: %v", in, err)
		}
	}
	if n, err := ParseIOPS("--host-read-iops", "500"); err != nil || n != 500 {
		t.Fatal(n, err)
	}
	for _, in := range []string{"", "5", "1.5", "x"} {
		if _, err := ParseIOPS("--host-write-iops", in); !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "--host-write-iops") {
			t.Errorf("%q: %v", in, err)
		}
	}
}

func TestIOMax(t *testing.T) {
	d := &Device{Major: 254, Minor: 0}
	if got := IOMax(d, Budget{ReadBPS: 1 << 20, WriteIOPS: 100}); got != "254:0 rbps=1048576 wbps=max riops=max wiops=100" {
		t.Fatal(got)
	}
}

func TestDeviceOfThisFolder(t *testing.T) {
	dir := t.TempDir()
	d, err := DeviceOf(filepath.Join(dir, "not", "yet"))
	if err != nil {
		if agerr.IsBadInput(err) { // a tmpfs /tmp: said so, by name
			t.Skipf("%v", err)
		}
		t.Fatal(err)
	}
	if _, err := os.Stat("/sys/dev/block/" + d.String()); err != nil || d.Name == "" {
		t.Fatalf("%+v: %v", d, err)
	}
}

func FuzzParseLimits(f *testing.F) {
	f.Add("254:0")
	f.Add("64k")
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := ParseBPS("--host-read-bps", s); err == nil && n < MinIOBPS {
			t.Fatalf("%q: %d", s, n)
		}
		if n, err := ParseIOPS("--host-read-iops", s); err == nil && n < MinIOPS {
			t.Fatalf("%q: %d", s, n)
		}
	})
}

// A group's IO limit holds a process's direct reads to it, by the kernel's own count of the
// bytes the group read: the bytes read can never exceed the limit times the time taken
// (plus one throttle slice), however loaded the machine is, while the disk alone reads
// them many times faster. Removing the group removes it from the blkio hierarchy too.
func TestGroupIOLimitHoldsDirectReads(t *testing.T) {
	s := requireRoot(t)
	if s.IORoot == "" {
		t.Skip("no blkio/io controller here")
	}
	dir := t.TempDir()
	dev, err := DeviceOf(dir)
	if err != nil {
		t.Skipf("no block device under %s: %v", dir, err)
	}
	file := filepath.Join(dir, "data")
	const size, limit = 4 << 20, 2 << 20
	if out, err := exec.Command("dd", "if=/dev/urandom", "of="+file, "bs=1M", "count=4", "conv=fsync", "status=none").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	// Named by the test process too: t.TempDir's base ("001") is the same in every run, and a
	// test binary of another package or checkout running at once must not share (and remove,
	// killing what runs in it) the group.
	name := fmt.Sprintf("%stest-io-%d-%s", GroupPrefix, os.Getpid(), filepath.Base(dir))
	g, err := s.Create(name, Budget{ReadBPS: limit}, s.CPUs, dev)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Remove() })
	if s.Version == 1 {
		if got := readString(t, filepath.Join(g.IO, "blkio.throttle.read_bps_device")); got != dev.String()+" 2097152" {
			t.Fatalf("read_bps_device %q", got)
		}
	}
	before, err := g.Read()
	if err != nil || !before.HasIO {
		t.Fatalf("%+v %v", before, err)
	}
	cmd := exec.Command("dd", "if="+file, "of=/dev/null", "bs=64k", "iflag=direct", "status=none")
	start := time.Now()
	if err := g.Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start).Seconds()
	after, err := g.Read()
	if err != nil {
		t.Fatal(err)
	}
	read := after.IO.ReadBytes - before.IO.ReadBytes
	if read < size {
		t.Fatalf("the group read %d bytes on %s, want the file's %d: its reads were not counted to it", read, dev, size)
	}
	if allowed := limit * (took + 0.2); float64(read) > allowed {
		t.Fatalf("the group read %d bytes in %.2fs, more than its %d B/s limit allows (%.0f)", read, took, limit, allowed)
	}
	if ops := after.IO.ReadOps - before.IO.ReadOps; ops < size/(64<<10) {
		t.Fatalf("%d read operations counted", ops)
	}
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(g.IO); !os.IsNotExist(err) {
		t.Fatalf("%s left: %v", g.IO, err)
	}
}
