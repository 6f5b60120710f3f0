package main

import (
	"strings"
	"testing"
)

func TestSeedBadInputExits2(t *testing.T) {
	env := map[string]string{"AGBENCH_HOME": t.TempDir()}
	cases := [][]string{
		{"seed", "--compress", "brotli"},
		{"seed", "--compress", "zstd:99"},
		{"seed", "--method", "copy"},
		{"seed", "--max-rate", "fast"},
		{"seed", "--max-rate", "1k"},
		{"seed", "--sync", "--async"},
		{"seed", "--init-size", "1x"},
		{"seed", "--init-only"},
		{"seed", "--compare", "speed=1,2"},
		{"seed", "--compare", "method=direct", "compress=none,rar"},
		{"seed", "--repeat", "3"},
		{"seed", "stray"},
		{"seed", "--cluster", "nope"},
		{"seed", "history", "--cluster", "nope"},
		{"seed", "drop", "--cluster", "nope", "--name", "x"},
	}
	for _, args := range cases {
		code, _, errs := runCLI(t, env, args...)
		if code != 2 || errs == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, errs)
		}
	}
	// Every problem at once.
	_, _, errs := runCLI(t, env, "seed", "--compress", "brotli", "--method", "copy", "--max-rate", "fast")
	for _, flag := range []string{"--compress", "--method", "--max-rate"} {
		if !strings.Contains(errs, flag) {
			t.Errorf("combined bad input does not name %s: %q", flag, errs)
		}
	}
}
