package proc

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The control groups' files, v1 and v2. procfs reads none of them (they belong to no
// process), so each is parsed here by hand. dir is a group's folder as the machine names
// it (under a hierarchy's mount point, /sys/fs/cgroup/...); FS puts it under its root.

// CgroupInt reads a group's file of one integer: cpuacct.usage, memory.usage_in_bytes
// (v1), memory.current (v2).
func (f FS) CgroupInt(dir, name string) (int64, error) {
	b, err := os.ReadFile(f.Path(filepath.Join(dir, name)))
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// CgroupText reads a group's file of one line, trimmed: cpuset.cpus, cpuset.cpus.effective,
// cpuset.mems (the CPU list is read by internal/result).
func (f FS) CgroupText(dir, name string) (string, error) {
	b, err := os.ReadFile(f.Path(filepath.Join(dir, name)))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// CgroupWords reads a group's file of words: cgroup.controllers, cgroup.subtree_control.
func (f FS) CgroupWords(dir, name string) ([]string, error) {
	b, err := os.ReadFile(f.Path(filepath.Join(dir, name)))
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(b)), nil
}

// CgroupProcs reads the processes in a group (cgroup.procs); a line that is no pid is
// skipped.
func (f FS) CgroupProcs(dir string) ([]int, error) {
	b, err := os.ReadFile(f.Path(filepath.Join(dir, "cgroup.procs")))
	if err != nil {
		return nil, err
	}
	var out []int
	for _, w := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(w); err == nil {
			out = append(out, pid)
		}
	}
	return out, nil
}

// CgroupStat reads a group's "key value" file: cpu.stat or memory.stat (v1 and v2).
func (f FS) CgroupStat(dir, name string) (map[string]int64, error) {
	b, err := os.ReadFile(f.Path(filepath.Join(dir, name)))
	if err != nil {
		return nil, err
	}
	return ParseCgroupStat(b), nil
}

// ParseCgroupStat reads the "key value" lines of cpu.stat and memory.stat; lines it cannot
// read are skipped.
func ParseCgroupStat(data []byte) map[string]int64 {
	out := map[string]int64{}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			out[k] = n
		}
	}
	return out
}

// CgroupIO is a group's IO on one block device since the group was made.
type CgroupIO struct {
	ReadBytes, WriteBytes, ReadOps, WriteOps int64
}

// CgroupIOv1 reads a v1 blkio group's counters on device maj:min
// (blkio.throttle.io_service_bytes and io_serviced).
func (f FS) CgroupIOv1(dir string, maj, min uint32) (CgroupIO, error) {
	var c CgroupIO
	dev := fmt.Sprintf("%d:%d", maj, min)
	b, err := os.ReadFile(f.Path(filepath.Join(dir, "blkio.throttle.io_service_bytes")))
	if err != nil {
		return c, err
	}
	c.ReadBytes, c.WriteBytes = ParseBlkioThrottle(b, dev)
	if b, err = os.ReadFile(f.Path(filepath.Join(dir, "blkio.throttle.io_serviced"))); err != nil {
		return c, err
	}
	c.ReadOps, c.WriteOps = ParseBlkioThrottle(b, dev)
	return c, nil
}

// CgroupIOv2 reads a v2 group's counters on device maj:min (io.stat).
func (f FS) CgroupIOv2(dir string, maj, min uint32) (CgroupIO, error) {
	b, err := os.ReadFile(f.Path(filepath.Join(dir, "io.stat")))
	if err != nil {
		return CgroupIO{}, err
	}
	return ParseIOStat(b, fmt.Sprintf("%d:%d", maj, min)), nil
}

// ParseBlkioThrottle reads v1's blkio.throttle.io_service_bytes or io_serviced ("8:0 Read
// 4096" lines) and returns the Read and Write figures of dev ("major:minor"; 0 when the
// group has done no IO on it yet).
func ParseBlkioThrottle(data []byte, dev string) (read, write int64) {
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != dev {
			continue
		}
		n, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			continue
		}
		switch f[1] {
		case "Read":
			read = n
		case "Write":
			write = n
		}
	}
	return read, write
}

// ParseIOStat reads v2's io.stat ("8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0"
// lines) and returns dev's counters ("major:minor"; zero when the group has done no IO on
// it yet).
func ParseIOStat(data []byte, dev string) CgroupIO {
	var c CgroupIO
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != dev {
			continue
		}
		for _, kv := range f[1:] {
			k, v, _ := strings.Cut(kv, "=")
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				continue
			}
			switch k {
			case "rbytes":
				c.ReadBytes = n
			case "wbytes":
				c.WriteBytes = n
			case "rios":
				c.ReadOps = n
			case "wios":
				c.WriteOps = n
			}
		}
	}
	return c
}

// CPUMax reads a v2 group's CPU quota from cpu.max, in cores; false when it has none or
// the file cannot be read.
func (f FS) CPUMax(dir string) (float64, bool) {
	b, err := os.ReadFile(f.Path(filepath.Join(dir, "cpu.max")))
	if err != nil {
		return 0, false
	}
	return ParseCPUMax(b)
}

// ParseCPUMax reads cgroup v2's cpu.max: "$MAX $PERIOD", MAX "max" for no quota, the
// period 100000 µs when it is left out.
func ParseCPUMax(data []byte) (float64, bool) {
	f := bytes.Fields(data)
	if len(f) == 0 || string(f[0]) == "max" {
		return 0, false
	}
	quota, err := strconv.ParseFloat(string(f[0]), 64)
	period := 100000.0
	if len(f) > 1 {
		if p, perr := strconv.ParseFloat(string(f[1]), 64); perr == nil {
			period = p
		}
	}
	if err != nil || quota <= 0 || period <= 0 || math.IsInf(quota, 0) {
		return 0, false
	}
	return quota / period, true
}

// CFSQuota reads a v1 group's CPU quota from cpu.cfs_quota_us and cpu.cfs_period_us, in
// cores; false when it has none (quota -1) or the files cannot be read.
func (f FS) CFSQuota(dir string) (float64, bool) {
	var v [2]float64
	for i, name := range []string{"cpu.cfs_quota_us", "cpu.cfs_period_us"} {
		b, err := os.ReadFile(f.Path(filepath.Join(dir, name)))
		if err != nil {
			return 0, false
		}
		if v[i], err = strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err != nil {
			return 0, false
		}
	}
	if v[0] <= 0 || v[1] <= 0 {
		return 0, false
	}
	return v[0] / v[1], true
}
