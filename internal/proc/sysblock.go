package proc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ReadsInFlight reads the number of the block device's reads that were issued and have
// not completed, from /sys/block/<name>/inflight.
//
// By hand: procfs reads a device's stat file, whose in-flight figure sums reads and
// writes, where agbench waits for reads only (a file system's journal writes do not
// matter to it).
func (f FS) ReadsInFlight(name string) (int64, error) {
	b, err := os.ReadFile(f.Sys("block", name, "inflight"))
	if err != nil {
		return 0, err
	}
	reads, _, err := ParseInflight(b)
	if err != nil {
		return 0, fmt.Errorf("/sys/block/%s/inflight: %w", name, err)
	}
	return reads, nil
}

// ParseInflight reads a device's inflight file: "<reads> <writes>".
func ParseInflight(data []byte) (reads, writes int64, err error) {
	f := bytes.Fields(data)
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("%q: want reads and writes", data)
	}
	var n [2]int64
	for i := range n {
		if n[i], err = strconv.ParseInt(string(f[i]), 10, 64); err != nil || n[i] < 0 {
			return 0, 0, fmt.Errorf("%q is not a count", f[i])
		}
	}
	return n[0], n[1], nil
}

// BlockDisk is a whole disk: its device numbers and the kernel's name for it (vda, sda,
// dm-0, nvme0n1).
type BlockDisk struct {
	Major, Minor uint32
	Name         string
}

// WholeDisk resolves block device major:minor to its whole disk, the one the IO
// controllers take limits on and /proc/diskstats names, through /sys/dev/block: a
// partition's disk is the folder above it; any other device (a device-mapper or md device
// too) is a disk of its own. A device that does not exist is an error that wraps
// os.ErrNotExist; a partition whose disk cannot be read is another error.
func (f FS) WholeDisk(major, minor uint32) (BlockDisk, error) {
	return WholeDiskIn(f.Sys(), major, minor)
}

// WholeDiskIn is WholeDisk in a sysfs tree mounted at sys, for callers that are given the
// tree rather than a root.
func WholeDiskIn(sys string, major, minor uint32) (BlockDisk, error) {
	dir, err := filepath.EvalSymlinks(filepath.Join(sys, "dev", "block", fmt.Sprintf("%d:%d", major, minor)))
	if err != nil {
		return BlockDisk{}, fmt.Errorf("block device %d:%d: %w", major, minor, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "partition")); err == nil {
		dir = filepath.Dir(dir)
		b, err := os.ReadFile(filepath.Join(dir, "dev"))
		if err != nil { // %v: a device that exists is never os.ErrNotExist
			return BlockDisk{}, fmt.Errorf("the disk of partition %d:%d: %v", major, minor, err)
		}
		if major, minor, err = ParseDevNumber(strings.TrimSpace(string(b))); err != nil {
			return BlockDisk{}, fmt.Errorf("the disk of partition %d:%d: %w", major, minor, err)
		}
	}
	return BlockDisk{Major: major, Minor: minor, Name: filepath.Base(dir)}, nil
}

// ParseDevNumber reads a device number as sysfs's dev files and the control groups write
// it: "major:minor".
func ParseDevNumber(s string) (major, minor uint32, err error) {
	a, b, ok := strings.Cut(s, ":")
	ma, err1 := strconv.ParseUint(a, 10, 32)
	mi, err2 := strconv.ParseUint(b, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("device %q: want major:minor", s)
	}
	return uint32(ma), uint32(mi), nil
}
