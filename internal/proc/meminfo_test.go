package proc

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// rootWith makes a root whose /proc holds one file, name, with text (and an empty /sys).
func rootWith(t *testing.T, name, text string) FS {
	t.Helper()
	f := At(t.TempDir())
	if err := os.MkdirAll(filepath.Dir(f.Proc(name)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(f.Sys(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.Proc(name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestMeminfo(t *testing.T) {
	m, err := fixture.Meminfo()
	if want := (Meminfo{TotalBytes: 24684084 << 10, AvailableBytes: 23610984 << 10, CachedBytes: 2330584 << 10}); err != nil || m != want {
		t.Errorf("fixture: %+v, %v; want %+v", m, err, want)
	}
	// Before Linux 3.14 there is no MemAvailable: zero, not an error.
	m, err = rootWith(t, "meminfo", "MemTotal:       1024 kB\nMemFree:         512 kB\nCached:          256 kB\nHugePages_Total:       0\n").Meminfo()
	if want := (Meminfo{TotalBytes: 1 << 20, CachedBytes: 256 << 10}); err != nil || m != want {
		t.Errorf("old kernel: %+v, %v; want %+v", m, err, want)
	}
	for _, bad := range []string{"", "MemFree: 1 kB\n", "MemTotal: x kB\n", "MemTotal:\n", "MemTotal: 9007199254740993 kB\n"} {
		if m, err := rootWith(t, "meminfo", bad).Meminfo(); err == nil {
			t.Errorf("meminfo %q: %+v, no error", bad, m)
		}
	}
	if _, err := At(t.TempDir()).Meminfo(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no /proc: %v, want a file that does not exist", err)
	}
	if _, err := rootWith(t, "stat", "").Meminfo(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no /proc/meminfo: %v, want a file that does not exist", err)
	}
}
