package main

import (
	"strings"
	"testing"
)

func TestSLOFlagBadInput(t *testing.T) {
	code, _, errs := runCLI(t, map[string]string{"AGBENCH_HOME": t.TempDir()}, "tpcc", "run", "--primary", "host=x", "--slo", "p99<5xs")
	if code != 2 || !strings.Contains(errs, `--slo "p99<5xs": at 6: want a unit`) {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}
