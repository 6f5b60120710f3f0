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
	empty := rootWith(t, "stat", "")
	if _, err := empty.OSRelease(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no osrelease: %v", err)
	}
	if _, err := empty.CPUModel(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no cpuinfo: %v", err)
	}
}
