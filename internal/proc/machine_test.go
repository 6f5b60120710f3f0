package proc

import (
	"errors"
	"os"
	"runtime"
	"testing"
)

func TestMachine(t *testing.T) {
	if r, err := fixture.OSRelease(); err != nil || r != "6.18.44-fc-v669" {
		t.Errorf("OSRelease: %q, %v", r, err)
	}
	// The fixture is an x86 machine's: procfs reads each architecture's layout.
	if m, err := fixture.CPUModel(); (runtime.GOARCH == "amd64" || runtime.GOARCH == "386") && (err != nil || m != "AMD EPYC") {
		t.Errorf("CPUModel: %q, %v", m, err)
	}
	if v, err := fixture.SysctlInt("kernel.io_uring_disabled"); err != nil || v != 0 {
		t.Errorf("io_uring_disabled: %d, %v", v, err)
	}
	if v, err := fixture.SysctlInt("kernel.osrelease"); err == nil {
		t.Errorf("osrelease as a number: %d", v)
	}
	empty := rootWith(t, "stat", "")
	if _, err := empty.SysctlInt("kernel.io_uring_disabled"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no io_uring_disabled: %v", err)
	}
	if _, err := empty.OSRelease(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no osrelease: %v", err)
	}
	if _, err := empty.CPUModel(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no cpuinfo: %v", err)
	}
}
