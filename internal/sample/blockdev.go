package sample

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/agbench/agbench/internal/proc"
)

// ErrNoBlockDevice says that a path lives on a file system with no block device under it
// (tmpfs, overlay, network file systems); device statistics are not available for it.
var ErrNoBlockDevice = errors.New("no block device behind the path")

// DeviceForPath names the whole disk (as /proc/diskstats names it) that holds path: the
// file system's device number (st_dev) is looked up in sysRoot/dev/block/MAJ:MIN, and a
// partition is replaced by the disk it belongs to. sysRoot is normally "/sys".
func DeviceForPath(sysRoot, path string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return "", fmt.Errorf("device of %s: %w", path, err)
	}
	name, err := BlockDevice(sysRoot, unix.Major(st.Dev), unix.Minor(st.Dev))
	if err != nil {
		return "", fmt.Errorf("device of %s: %w", path, err)
	}
	return name, nil
}

// BlockDevice names the whole disk behind device number maj:min through sysfs: the
// partition's parent when maj:min is a partition, the device itself otherwise.
// (proc's WholeDisk, the one reading of sysfs for it.)
func BlockDevice(sysRoot string, maj, min uint32) (string, error) {
	d, err := proc.WholeDiskIn(sysRoot, maj, min)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%d:%d: %w", maj, min, ErrNoBlockDevice)
	}
	if err != nil {
		return "", err
	}
	return d.Name, nil
}
