package proc

import (
	"errors"
	"fmt"
	"strings"

	"github.com/prometheus/procfs"
)

// OSRelease reads the kernel's release (/proc/sys/kernel/osrelease), through procfs's
// SysctlStrings.
func (f FS) OSRelease() (string, error) {
	pfs, err := procfs.NewFS(f.Proc())
	if err != nil {
		return "", err
	}
	v, err := pfs.SysctlStrings("kernel.osrelease")
	if err != nil {
		return "", err
	}
	return strings.Join(v, " "), nil
}

// SysctlInt reads a kernel setting of one integer under /proc/sys ("kernel.io_uring_disabled"),
// through procfs's SysctlInts.
func (f FS) SysctlInt(name string) (int, error) {
	pfs, err := procfs.NewFS(f.Proc())
	if err != nil {
		return 0, err
	}
	v, err := pfs.SysctlInts(name)
	if err != nil {
		return 0, err
	}
	if len(v) != 1 {
		return 0, fmt.Errorf("%s: %d values, want one", f.Proc("sys", strings.ReplaceAll(name, ".", "/")), len(v))
	}
	return v[0], nil
}

// CPUModel reads the first CPU's model name from /proc/cpuinfo, through procfs's CPUInfo
// (which knows each architecture's layout of the file).
func (f FS) CPUModel() (string, error) {
	pfs, err := procfs.NewFS(f.Proc())
	if err != nil {
		return "", err
	}
	cpus, err := pfs.CPUInfo()
	if err != nil {
		return "", err
	}
	if len(cpus) == 0 || cpus[0].ModelName == "" {
		return "", errors.New(f.Proc("cpuinfo") + ": no model name")
	}
	return cpus[0].ModelName, nil
}
