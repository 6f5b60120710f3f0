package main

import (
	"os"
	"strings"
	"testing"
)

func TestReadaheadBadInputWritesNothing(t *testing.T) {
	out := t.TempDir()
	code, _, errs := runCLI(t, nil, "readahead", "--out", out, "--cluster", "lab", "--pg-bin", "/nowhere",
		"--rows", "10", "--repeat", "0", "--queries", "full,bogus", "--device", "tape")
	if code != 2 {
		t.Fatalf("exit %d, want 2; stderr %s", code, errs)
	}
	for _, want := range []string{"--cluster and --pg-bin", "--rows", "--repeat", "--queries", "--device"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr does not name %s: %s", want, errs)
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("bad input wrote %d entries into %s", len(entries), out)
	}
	code, _, errs = runCLI(t, map[string]string{"AGBENCH_HOME": t.TempDir()}, "readahead", "--cluster", "nosuch", "--rows", "2000", "--out", out)
	if code != 2 || !strings.Contains(errs, "nosuch") {
		t.Errorf("unknown cluster: exit %d, stderr %s", code, errs)
	}
}
