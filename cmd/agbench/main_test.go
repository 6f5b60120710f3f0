package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/experiment"
)

// runCLI runs agbench in-process with the given environment and returns exit code and output.
func runCLI(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	a := &app{stdout: &out, stderr: &errb, getenv: func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}}
	code := run(context.Background(), a, args)
	return code, out.String(), errb.String()
}

// badInput is a command line agbench must refuse as bad input, and what the message names.
type badInput struct {
	args []string
	want string
}

// wantRefused runs each command line, with extra after its own words: each must exit 2 with a
// message naming its want, and together they must make nothing that glob matches.
func wantRefused(t *testing.T, env map[string]string, glob string, cases []badInput, extra ...string) {
	t.Helper()
	for _, c := range cases {
		code, _, errs := runCLI(t, env, slices.Concat(c.args, extra)...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %q", c.args, code, errs, c.want)
		}
	}
	wantNothing(t, glob)
}

// wantNothing fails the test when glob matches anything: what a refused command must not make.
func wantNothing(t *testing.T, glob string) {
	t.Helper()
	if m, _ := filepath.Glob(glob); len(m) != 0 {
		t.Fatalf("a refused command left %v", m)
	}
}

func TestRootHelpAndBadInput(t *testing.T) {
	code, out, _ := runCLI(t, nil, "--help")
	if code != 0 || !strings.Contains(out, "availability") {
		t.Fatalf("--help: code %d, out %q", code, out)
	}
	code, _, errs := runCLI(t, nil, "no-such-command")
	if code != 2 || !strings.Contains(errs, "no-such-command") {
		t.Fatalf("unknown command: code %d, stderr %q", code, errs)
	}
	code, _, errs = runCLI(t, nil, "--no-such-flag")
	if code != 2 || !strings.Contains(errs, "no-such-flag") {
		t.Fatalf("unknown flag: code %d, stderr %q", code, errs)
	}
}

// seed and readahead cannot act on a cluster given by connection strings: --primary,
// --standby or --listener is bad input that says why and what they take instead (it was
// "unknown flag: --primary").
func TestNoConnectionStringsSaysWhy(t *testing.T) {
	for _, args := range [][]string{{"seed", "--primary", "postgres://x@h/db"}, {"readahead", "--standby=postgres://x@h/db"}} {
		code, _, errs := runCLI(t, nil, args...)
		if code != 2 || !strings.Contains(errs, "takes no connection strings") || !strings.Contains(errs, "--cluster NAME") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
}

// Every registered kind of experiment has its command, with the registry's description,
// and its view; every view belongs to a registered kind.
func TestKindCommandsComeFromTheRegistry(t *testing.T) {
	root := newRoot(&app{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }})
	registered := map[string]bool{}
	for _, m := range experiment.Registered() {
		registered[m.Name] = true
		c, _, err := root.Find(strings.Fields(m.Name))
		if err != nil || c == root || c.CommandPath() != "agbench "+m.Name {
			t.Errorf("kind %q has no command (%v)", m.Name, err)
			continue
		}
		if c.Short != m.Description {
			t.Errorf("%s: help %q, registry says %q", m.Name, c.Short, m.Description)
		}
	}
	for name := range views {
		if !registered[name] {
			t.Errorf("view %q is of no registered kind", name)
		}
	}
	for name := range registered {
		if _, ok := views[name]; !ok {
			t.Errorf("kind %q has no view", name)
		}
	}
	for _, want := range []string{"stress", "scan", "tpcc run", "disk", "seed", "readahead", "drill"} {
		if !registered[want] {
			t.Errorf("kind %q not registered", want)
		}
	}
}
