package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/proc"
	"github.com/agbench/agbench/internal/status"
	"github.com/agbench/agbench/internal/units"
)

// IO limits of a modelled host: the kernel's blkio throttle (v1) or io.max (v2) on the block
// device that holds the node's data. Under v1 the throttle holds direct IO and reads (the
// page cache's misses are read by the reading process), but not buffered writes: those are
// written back later by the kernel's flusher threads, outside any group (a v1 limit that v2's
// cgroup writeback lifts).

// MinIOBPS and MinIOPS are the smallest IO limits a host may get: below them PostgreSQL
// could not start within agbench's waits.
const (
	MinIOBPS = 256 << 10
	MinIOPS  = 10
)

// Device is a block device by its numbers (status.Device).
type Device = status.Device

// DeviceOf finds the block device that holds path (or, when path does not exist yet, its
// nearest existing parent): the whole disk when the file system is on a partition, since
// the IO controllers take limits on whole disks only; a device-mapper or md device is a disk
// of its own and is limited as such. A file system on no block device (tmpfs, overlay) is
// bad input naming it.
func DeviceOf(path string) (*Device, error) {
	p, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	for {
		err = unix.Stat(p, &st)
		if err == nil || !errors.Is(err, unix.ENOENT) || p == "/" {
			break
		}
		p = filepath.Dir(p)
	}
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", p, err)
	}
	d, err := proc.Host.WholeDisk(unix.Major(st.Dev), unix.Minor(st.Dev))
	if errors.Is(err, os.ErrNotExist) {
		// btrfs and a few others give their files an anonymous device number: the mount's
		// source names the disk.
		src, fstype, merr := mountSourceOf(p)
		var sst unix.Stat_t
		if merr != nil || !strings.HasPrefix(src, "/dev/") || unix.Stat(src, &sst) != nil || sst.Mode&unix.S_IFMT != unix.S_IFBLK {
			return nil, agerr.BadInputf("per-node IO limits: %s is on a %s file system (%s), not on a block device; put the cluster's home (AGBENCH_HOME) on a disk", path, fstype, src)
		}
		d, err = proc.Host.WholeDisk(unix.Major(sst.Rdev), unix.Minor(sst.Rdev))
	}
	if err != nil {
		return nil, err
	}
	return &Device{Major: d.Major, Minor: d.Minor, Name: d.Name}, nil
}

// mountSourceOf returns the source and type of the mount that holds path, from
// /proc/self/mountinfo: the longest mount point that is path or a parent of it.
func mountSourceOf(path string) (source, fstype string, err error) {
	mounts, err := proc.Host.Mountinfo()
	if err != nil {
		return "", "", err
	}
	best := -1
	for _, m := range mounts {
		if (path == m.Point || strings.HasPrefix(path, strings.TrimSuffix(m.Point, "/")+"/")) && len(m.Point) > best {
			best, source, fstype = len(m.Point), m.Source, m.FSType
		}
	}
	if best < 0 {
		return "", "", fmt.Errorf("no mount holds %s", path)
	}
	return source, fstype, nil
}

// AutoCPUShares is what ParseCPUShares returns for "auto": the caller gives a weight in
// proportion to the CPU budget (cpu.shares of SharesPerCore per core of budget).
const AutoCPUShares = -1

// SharesPerCore is the weight "auto" gives a host per core of its CPU budget: 32 plain
// processes' worth, so that a host pinned to a CPU still gets a 0.6-core budget while a
// dozen other busy processes share that CPU (0.6 core: 19661 against 12 × 1024). The
// quota keeps it from taking more.
const SharesPerCore = 32 * 1024

// SharesFor is the weight "auto" gives a host of this CPU budget (0 for none).
func SharesFor(cpus float64) int {
	if cpus <= 0 {
		return 0
	}
	return min(max(int(cpus*SharesPerCore+0.5), MinCPUShares), MaxCPUShares)
}

// ParseCPUShares reads --host-cpu-shares: "auto" (AutoCPUShares), "kernel" or 0 (the
// kernel's default weight, 0), or a weight in cpu.shares units.
func ParseCPUShares(flag, s string) (int, error) {
	switch strings.TrimSpace(s) {
	case "auto":
		return AutoCPUShares, nil
	case "kernel", "0":
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < MinCPUShares || n > MaxCPUShares {
		return 0, agerr.BadInputf("%s %q: want auto (in proportion to the CPU budget), kernel (the kernel's default weight) or a weight from %d to %d in cpu.shares units (1024 is a plain process's)", flag, s, MinCPUShares, MaxCPUShares)
	}
	return n, nil
}

// ioFlags names the flags of the IO limits, as errors name them.
const ioFlags = "--host-read-bps, --host-write-bps, --host-read-iops, --host-write-iops"

// ParseBPS reads an IO limit in bytes per second as the flag named flag takes it: a size with
// an optional binary unit and an optional "/s" (20M, 1.5M/s, 512K).
func ParseBPS(flag, s string) (int64, error) {
	n, err := units.ParseRate(s)
	if err != nil || n < MinIOBPS {
		return 0, agerr.BadInputf("%s %q: want bytes per second of at least %s, e.g. 20M (20 MiB/s)", flag, s, units.FormatBytesExact(MinIOBPS))
	}
	return n, nil
}

// ParseIOPS reads an IO limit in operations per second as the flag named flag takes it.
func ParseIOPS(flag, s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < MinIOPS {
		return 0, agerr.BadInputf("%s %q: want a whole number of IO operations per second of at least %d, e.g. 500", flag, s, MinIOPS)
	}
	return n, nil
}

// checkIO says whether the machine can limit IO as the budget asks.
func (s *System) checkIO(b Budget) []error {
	var errs []error
	for _, c := range []struct {
		flag string
		v    int64
		min  int64
	}{{"--host-read-bps", b.ReadBPS, MinIOBPS}, {"--host-write-bps", b.WriteBPS, MinIOBPS},
		{"--host-read-iops", b.ReadIOPS, MinIOPS}, {"--host-write-iops", b.WriteIOPS, MinIOPS}} {
		if c.v < 0 || (c.v > 0 && c.v < c.min) {
			errs = append(errs, agerr.BadInputf("%s %d: want at least %d", c.flag, c.v, c.min))
		}
	}
	if b.HasIO() && s.IORoot == "" {
		how := "mount v1's blkio hierarchy (mkdir -p /sys/fs/cgroup/blkio && mount -t cgroup -o blkio cgroup /sys/fs/cgroup/blkio)"
		if s.Version == 2 {
			how = "enable the io controller at the cgroup2 root (echo +io > " + filepath.Join(s.Roots["cpu"], "cgroup.subtree_control") + ")"
		}
		errs = append(errs, agerr.BadInputf("per-node IO limits (%s) need the kernel's %s control-group controller, which this machine does not offer: %s, or leave the IO limits out",
			ioFlags, map[int]string{1: "blkio", 2: "io"}[s.Version], how))
	}
	return errs
}

// setIO writes the group's IO limits on its device.
func (g *Group) setIO(b Budget) error {
	dev := g.IODevice.String()
	if g.Version == 1 {
		for _, f := range []struct {
			file string
			v    int64
		}{{"blkio.throttle.read_bps_device", b.ReadBPS}, {"blkio.throttle.write_bps_device", b.WriteBPS},
			{"blkio.throttle.read_iops_device", b.ReadIOPS}, {"blkio.throttle.write_iops_device", b.WriteIOPS}} {
			if err := write(filepath.Join(g.IO, f.file), dev+" "+strconv.FormatInt(f.v, 10)); err != nil {
				return err
			}
		}
		return nil
	}
	return write(filepath.Join(g.IO, "io.max"), IOMax(g.IODevice, b))
}

// IOMax is the line of cgroup v2's io.max that sets the budget's limits on dev ("max" where
// the budget sets none).
func IOMax(dev *Device, b Budget) string {
	v := func(n int64) string {
		if n <= 0 {
			return "max"
		}
		return strconv.FormatInt(n, 10)
	}
	return fmt.Sprintf("%s rbps=%s wbps=%s riops=%s wiops=%s", dev, v(b.ReadBPS), v(b.WriteBPS), v(b.ReadIOPS), v(b.WriteIOPS))
}

// IOCounters are a group's IO on one device since the group was made.
type IOCounters struct {
	ReadBytes, WriteBytes, ReadOps, WriteOps int64
}

// readIO reads the group's IO counters on its device.
func (g *Group) readIO() (IOCounters, error) {
	read := proc.Host.CgroupIOv2
	if g.Version == 1 {
		read = proc.Host.CgroupIOv1
	}
	c, err := read(g.IO, g.IODevice.Major, g.IODevice.Minor)
	return IOCounters(c), err
}
