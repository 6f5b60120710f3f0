package proc

import (
	"errors"
	"os"
	"testing"
)

// The v1 files of testdata/root/sys/fs/cgroup are this machine's (its hierarchies' roots);
// v2's io.stat, cpu.max and memory.current under unified/node are laid out as the kernel's
// cgroup-v2.rst shows them, this machine having no v2 controllers.

func TestCgroupIntAndStat(t *testing.T) {
	for _, c := range []struct {
		dir, name string
		want      int64
	}{
		{"/sys/fs/cgroup/cpuacct", "cpuacct.usage", 7413874221869},
		{"/sys/fs/cgroup/memory", "memory.usage_in_bytes", 8033447936},
		{"/sys/fs/cgroup/unified/node", "memory.current", 73728000},
	} {
		if n, err := fixture.CgroupInt(c.dir, c.name); err != nil || n != c.want {
			t.Errorf("%s/%s: %d, %v; want %d", c.dir, c.name, n, err, c.want)
		}
	}
	if _, err := fixture.CgroupInt("/sys/fs/cgroup/memory", "memory.current"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("v2's file in v1: %v, want a file that does not exist", err)
	}
	v1, err := fixture.CgroupStat("/sys/fs/cgroup/cpu", "cpu.stat")
	if err != nil || len(v1) != 5 || v1["nr_periods"] != 0 {
		t.Errorf("v1 cpu.stat: %v, %v", v1, err)
	}
	v2, err := fixture.CgroupStat("/sys/fs/cgroup/unified", "cpu.stat")
	if err != nil || v2["usage_usec"] != 7403863277 || v2["nice_usec"] != 4271723 {
		t.Errorf("v2 cpu.stat: %v, %v", v2, err)
	}
	if ms, err := fixture.CgroupStat("/sys/fs/cgroup/memory", "memory.stat"); err != nil || ms["cache"] != 17580032 || ms["total_cache"] != 7312216064 {
		t.Errorf("v1 memory.stat: %v, %v", ms, err)
	}
	if _, err := fixture.CgroupStat("/sys/fs/cgroup/nogroup", "cpu.stat"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no group: %v, want a file that does not exist", err)
	}
}

func TestParseCgroupStat(t *testing.T) {
	m := ParseCgroupStat([]byte("nr_periods 10\nnr_throttled 4\nthrottled_time 123\nbad\nx y\n"))
	if m["nr_periods"] != 10 || m["nr_throttled"] != 4 || m["throttled_time"] != 123 || len(m) != 3 {
		t.Fatalf("%v", m)
	}
}

func TestCgroupIO(t *testing.T) {
	c, err := fixture.CgroupIOv1("/sys/fs/cgroup/blkio", 254, 0)
	if want := (CgroupIO{ReadBytes: 112796447744, WriteBytes: 225964425216, ReadOps: 3416360, WriteOps: 5431137}); err != nil || c != want {
		t.Errorf("v1 254:0: %+v, %v; want %+v", c, err, want)
	}
	// No IO on a device yet: zero, the group's true count.
	if c, err := fixture.CgroupIOv1("/sys/fs/cgroup/blkio", 8, 0); err != nil || c != (CgroupIO{}) {
		t.Errorf("v1 8:0: %+v, %v", c, err)
	}
	c, err = fixture.CgroupIOv2("/sys/fs/cgroup/unified/node", 254, 0)
	if want := (CgroupIO{ReadBytes: 1048576, WriteBytes: 2097152, ReadOps: 256, WriteOps: 512}); err != nil || c != want {
		t.Errorf("v2 254:0: %+v, %v; want %+v", c, err, want)
	}
	for _, v1 := range []bool{true, false} {
		read := fixture.CgroupIOv2
		if v1 {
			read = fixture.CgroupIOv1
		}
		if _, err := read("/sys/fs/cgroup/nogroup", 254, 0); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("v1 %v, no group: %v, want a file that does not exist", v1, err)
		}
	}
	if r, w := ParseBlkioThrottle([]byte("Total 0\n"), "254:0"); r != 0 || w != 0 {
		t.Error(r, w)
	}
}

func TestCPUQuota(t *testing.T) {
	if q, ok := fixture.CPUMax("/sys/fs/cgroup/unified/node"); !ok || q != 1.5 {
		t.Errorf("v2 150000 100000: %v %v", q, ok)
	}
	if q, ok := fixture.CPUMax("/sys/fs/cgroup/unified"); ok {
		t.Errorf("v2 max: %v", q)
	}
	if q, ok := fixture.CFSQuota("/sys/fs/cgroup/cpu"); ok {
		t.Errorf("v1 -1: %v", q)
	}
	if q, ok := fixture.CFSQuota("/sys/fs/cgroup/nogroup"); ok {
		t.Errorf("no group: %v", q)
	}
	root := rootWith(t, "stat", "")
	for name, text := range map[string]string{"cpu.cfs_quota_us": "50000\n", "cpu.cfs_period_us": "100000\n"} {
		if err := os.WriteFile(root.Path("/"+name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if q, ok := root.CFSQuota("/"); !ok || q != 0.5 {
		t.Errorf("v1 50000 of 100000: %v %v", q, ok)
	}
	for in, want := range map[string]float64{"max 100000": 0, "50000 100000": 0.5, "50000": 0.5, "1e400 1": 0, "5 0": 0, "": 0, "x 1": 0} {
		if q, ok := ParseCPUMax([]byte(in)); q != want || ok != (want > 0) {
			t.Errorf("ParseCPUMax(%q) = %v %v, want %v", in, q, ok, want)
		}
	}
}

// cpuset's root files and the unified root's controllers are this machine's; the node
// group's cgroup.procs is laid out as the kernel writes it, one pid a line.
func TestCgroupTextWordsAndProcs(t *testing.T) {
	if s, err := fixture.CgroupText("/sys/fs/cgroup/cpuset", "cpuset.cpus"); err != nil || s != "0-1" {
		t.Errorf("cpuset.cpus: %q, %v", s, err)
	}
	if s, err := fixture.CgroupText("/sys/fs/cgroup/cpuset", "cpuset.mems"); err != nil || s != "0" {
		t.Errorf("cpuset.mems: %q, %v", s, err)
	}
	if w, err := fixture.CgroupWords("/sys/fs/cgroup/unified", "cgroup.controllers"); err != nil || len(w) != 1 || w[0] != "hugetlb" {
		t.Errorf("cgroup.controllers: %q, %v", w, err)
	}
	if p, err := fixture.CgroupProcs("/sys/fs/cgroup/unified/node"); err != nil || len(p) != 3 || p[0] != 8749 || p[2] != 8760 {
		t.Errorf("cgroup.procs: %v, %v", p, err)
	}
	for _, err := range []error{
		func() error { _, err := fixture.CgroupText("/sys/fs/cgroup/nogroup", "cpuset.cpus"); return err }(),
		func() error {
			_, err := fixture.CgroupWords("/sys/fs/cgroup/nogroup", "cgroup.controllers")
			return err
		}(),
		func() error { _, err := fixture.CgroupProcs("/sys/fs/cgroup/nogroup"); return err }(),
	} {
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("no group: %v, want a file that does not exist", err)
		}
	}
}
