package proc

import (
	"errors"
	"os"
	"testing"
)

func TestUptime(t *testing.T) {
	if up, err := fixture.Uptime(); err != nil || up != 13531.68 {
		t.Errorf("fixture: %v, %v", up, err)
	}
	if _, err := At(t.TempDir()).Uptime(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no file: %v, want a file that does not exist", err)
	}
	if up, err := Host.Uptime(); err != nil || up <= 0 {
		t.Errorf("this machine: %v, %v", up, err)
	}
	for _, bad := range []string{"", "12.5", "x 1.0", "-1 2", "1 2 3"} {
		if _, err := ParseUptime([]byte(bad)); err == nil {
			t.Errorf("ParseUptime(%q): no error", bad)
		}
	}
}
