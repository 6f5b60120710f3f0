package readahead

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrNoDevice says a private block device could not be made here (not root, no losetup,
// no loop devices); the reason is wrapped with it.
var ErrNoDevice = errors.New("no private block device")

// LoopDevice is a file system on a loop device that agbench made: a sparse file attached
// with direct IO (so the backing file's page cache does not hide the device's reads),
// formatted ext4 and mounted in a temporary folder. Its read_ahead_kb is agbench's to set.
type LoopDevice struct {
	// Device is the loop device's path (/dev/loop3); Name its name in /proc/diskstats (loop3).
	Device, Name string
	// Major and Minor are its device numbers (for the blkio throttle).
	Major, Minor uint32
	// Mount is the folder it is mounted on; File the sparse backing file.
	Mount, File string
	dir         string
	attached    bool
	mounted     bool
}

// MakeLoopDevice makes a loop device of size bytes in a new folder under parent ("" means
// the system's temporary folder), mounted and owned by uid:gid. Whatever it made before a
// failure is removed again. Not being root or having no losetup is ErrNoDevice.
func MakeLoopDevice(ctx context.Context, parent string, size int64, uid, gid int) (*LoopDevice, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: making a loop device needs root", ErrNoDevice)
	}
	for _, tool := range []string{"losetup", "mkfs.ext4", "mount", "umount"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%w: %s not found", ErrNoDevice, tool)
		}
	}
	dir, err := os.MkdirTemp(parent, "agbench-readahead-")
	if err != nil {
		return nil, err
	}
	d := &LoopDevice{dir: dir, File: filepath.Join(dir, "device.img"), Mount: filepath.Join(dir, "mnt")}
	if err := d.make(ctx, size, uid, gid); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

func (d *LoopDevice) make(ctx context.Context, size int64, uid, gid int) error {
	if err := os.Chmod(d.dir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(d.File, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	f.Close()
	if err != nil {
		return fmt.Errorf("sparse file %s: %w", d.File, err)
	}
	out, err := exec.CommandContext(ctx, "losetup", "--find", "--show", "--direct-io=on", d.File).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: losetup: %v: %s", ErrNoDevice, err, strings.TrimSpace(string(out)))
	}
	d.Device, d.attached = strings.TrimSpace(string(out)), true
	d.Name = filepath.Base(d.Device)
	var st unix.Stat_t
	if err := unix.Stat(d.Device, &st); err != nil {
		return err
	}
	d.Major, d.Minor = unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev))
	if out, err := exec.CommandContext(ctx, "mkfs.ext4", "-q", "-F", "-m", "0", "-E", "lazy_itable_init=1,lazy_journal_init=1", d.Device).CombinedOutput(); err != nil {
		return fmt.Errorf("mkfs.ext4 %s: %v: %s", d.Device, err, strings.TrimSpace(string(out)))
	}
	if err := os.Mkdir(d.Mount, 0o755); err != nil {
		return err
	}
	if out, err := exec.CommandContext(ctx, "mount", "-o", "noatime", d.Device, d.Mount).CombinedOutput(); err != nil {
		return fmt.Errorf("mount %s: %v: %s", d.Device, err, strings.TrimSpace(string(out)))
	}
	d.mounted = true
	return os.Chown(d.Mount, uid, gid)
}

// ReadAheadPath is the device's read_ahead_kb file in sysfs.
func (d *LoopDevice) ReadAheadPath() string {
	return filepath.Join("/sys/block", d.Name, "queue", "read_ahead_kb")
}

// SetReadAhead sets the device's read-ahead in kB (0 turns the kernel's read-ahead off).
func (d *LoopDevice) SetReadAhead(kb int) error {
	return os.WriteFile(d.ReadAheadPath(), []byte(strconv.Itoa(kb)+"\n"), 0o644)
}

// ReadAhead reads the device's read-ahead in kB.
func (d *LoopDevice) ReadAhead() (int, error) {
	b, err := os.ReadFile(d.ReadAheadPath())
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// Close unmounts the file system, detaches the loop device and removes the backing file and
// the folder. It is safe to call more than once and does as much as it can on errors; it
// does not take a context, so that it runs to the end after Ctrl-C.
func (d *LoopDevice) Close() error {
	var errs []error
	if d.mounted {
		if out, err := exec.Command("umount", d.Mount).CombinedOutput(); err != nil {
			// A busy mount (a server still running on it) is detached lazily so that it
			// goes away once the last user leaves.
			if out2, err2 := exec.Command("umount", "-l", d.Mount).CombinedOutput(); err2 != nil {
				errs = append(errs, fmt.Errorf("umount %s: %v: %s %s", d.Mount, err, out, out2))
			} else {
				d.mounted = false
			}
		} else {
			d.mounted = false
		}
	}
	if d.attached && !d.mounted {
		if out, err := exec.Command("losetup", "-d", d.Device).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("losetup -d %s: %v: %s", d.Device, err, strings.TrimSpace(string(out))))
		} else {
			d.attached = false
		}
	}
	if d.dir != "" && !d.mounted {
		if err := os.RemoveAll(d.dir); err != nil {
			errs = append(errs, err)
		} else {
			d.dir = ""
		}
	}
	return errors.Join(errs...)
}
