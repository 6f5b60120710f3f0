package proc

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestReadsInFlight(t *testing.T) {
	if n, err := fixture.ReadsInFlight("vda"); err != nil || n != 0 {
		t.Errorf("fixture: %d, %v", n, err)
	}
	if _, err := fixture.ReadsInFlight("sdz"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no such device: %v, want a file that does not exist", err)
	}
	root := At(t.TempDir())
	if err := os.MkdirAll(root.Sys("block", "loop3"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root.Sys("block", "loop3"), "inflight"), []byte("       3        7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := root.ReadsInFlight("loop3"); err != nil || n != 3 {
		t.Errorf("3 reads, 7 writes: %d, %v", n, err)
	}
}

func TestParseInflight(t *testing.T) {
	if r, w, err := ParseInflight([]byte("       3        7\n")); err != nil || r != 3 || w != 7 {
		t.Errorf("%d %d %v", r, w, err)
	}
	for _, bad := range []string{"", "3", "3 x", "-1 0", "1 2 3", "x 1"} {
		if r, w, err := ParseInflight([]byte(bad)); err == nil {
			t.Errorf("ParseInflight(%q) = %d, %d, no error", bad, r, w)
		}
	}
}
