package proc

import (
	"errors"
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
