package readahead

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrNoThrottle says an IO throttle could not be set; the reason is wrapped with it.
var ErrNoThrottle = errors.New("no IO throttle")

// Throttle is a read IOPS limit on one block device, through the cgroup v1 blkio
// controller's blkio.throttle.read_iops_device of the root group: every process's reads of
// that device are limited, which is what the article's diskspd load did to SQL Server's
// storage ("system under pressure"). It is only ever set on a device agbench made.
type Throttle struct {
	file         string
	major, minor uint32
}

// blkioRoot is where cgroup v1's blkio controller is mounted on Debian and most others.
const blkioRoot = "/sys/fs/cgroup/blkio"

// ThrottleReads limits reads of device major:minor to iops per second. Where the blkio
// controller of cgroup v1 is not mounted (a cgroup v2 only system), it returns ErrNoThrottle:
// io.max of cgroup v2 cannot be set on the root group, and moving a running server's
// processes into a child group is not something agbench does to a server.
func ThrottleReads(major, minor uint32, iops int) (*Throttle, error) {
	f := filepath.Join(blkioRoot, "blkio.throttle.read_iops_device")
	if _, err := os.Stat(f); err != nil {
		return nil, fmt.Errorf("%w: cgroup v1 blkio throttle not available (%s): on cgroup v2 io.max applies to child groups only", ErrNoThrottle, f)
	}
	t := &Throttle{file: f, major: major, minor: minor}
	if err := t.write(iops); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoThrottle, err)
	}
	return t, nil
}

func (t *Throttle) write(iops int) error {
	return os.WriteFile(t.file, []byte(fmt.Sprintf("%d:%d %d\n", t.major, t.minor, iops)), 0o644)
}

// Close removes the limit (0 means none). Safe to call more than once.
func (t *Throttle) Close() error {
	if t == nil || t.file == "" {
		return nil
	}
	err := t.write(0)
	t.file = ""
	return err
}
