package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/experiment"
)

func TestStressBadInput(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"AGBENCH_HOME": dir}
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"stress", "--primary", "host=127.0.0.1", "--query", "SELECT 1", "--threads", "1,,x"}, []string{`--threads "1,,x": element 2`}},
		{[]string{"stress", "--threads", "0", "--intent", "sideways"}, []string{"--threads", "--intent \"sideways\"", "no query", "no target"}},
		{[]string{"stress", "--primary", "host=127.0.0.1", "--query-file", filepath.Join(dir, "nope.sql")}, []string{"--query-file"}},
		{[]string{"stress", "--primary", "host=127.0.0.1", "-q", "SELECT 1", "--compare", "routing=on"}, []string{"at least two"}},
		{[]string{"stress", "--primary", "host=127.0.0.1", "-q", "SELECT 1", "--compare", "colour=red,blue"}, []string{"compares routing"}},
		{[]string{"stress", "--primary", "host=127.0.0.1", "-q", "SELECT 1", "--param-range", "9:1"}, []string{"--param-range"}},
		{[]string{"stress", "--cluster", "nosuch", "-q", "SELECT 1"}, []string{"nosuch"}},
		{[]string{"scan", "--primary", "host=127.0.0.1", "--cold"}, []string{"--cold"}},
	}
	for _, c := range cases {
		code, _, errs := runCLI(t, env, append(c.args, "--results", filepath.Join(dir, "results"))...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", c.args, code, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: stderr %q lacks %q", c.args, errs, w)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "results")); !os.IsNotExist(err) {
		t.Fatalf("bad input wrote results: %v", err)
	}
}

// The command line a result records runs again as printed: boolean flags as --name=value.
func TestRecordedCommandLinePastes(t *testing.T) {
	a := &app{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
	given := []string{"--sample=false", "--threads", "1,2", "-q", "SELECT 1", "--primary", "host=x", "--standby", "host=a", "--standby", "host=b"}
	m, _ := experiment.Lookup("stress")
	first := kindCommand(a, m)
	if err := first.ParseFlags(given); err != nil {
		t.Fatal(err)
	}
	recorded := cmdArgs(first)
	again := kindCommand(a, m)
	if err := again.ParseFlags(recorded); err != nil { // a command without a parent records no name
		t.Fatalf("recorded %q does not parse: %v", recorded, err)
	}
	if got := cmdArgs(again); strings.Join(got, " ") != strings.Join(recorded, " ") {
		t.Errorf("recorded %q, parsed again %q", recorded, got)
	}
	if !slices.Contains(recorded, "--sample=false") {
		t.Errorf("recorded %q", recorded)
	}
}
