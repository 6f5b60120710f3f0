package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
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
