package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestStaleProbeBadInput(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"AGBENCH_HOME": dir}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"stress", "--primary", "host=127.0.0.1", "-q", "SELECT 1", "--stale-probe=banana", "--intent", "ro", "--standby", "host=127.0.0.2"}, `--stale-probe "banana": want eventual, causal or both`},
		{[]string{"stress", "--primary", "host=127.0.0.1", "-q", "SELECT 1", "--stale-probe"}, "--stale-probe: the probe reads with read intent"},
		{[]string{"stress", "--primary", "host=127.0.0.1", "-q", "SELECT 1", "--stale-probe", "--intent", "ro"}, "--stale-probe: no standby to read from"},
		{[]string{"stress", "--primary", "host=127.0.0.1", "--standby", "host=127.0.0.2", "-q", "SELECT 1", "--stale-probe=causal", "--intent", "ro"}, "--stale-probe causal: needs a listener"},
		{[]string{"tpcc", "run", "--primary", "host=127.0.0.1", "--stale-probe"}, "--stale-probe: the probe reads with read intent"},
		{[]string{"stress", "--primary", "host=127.0.0.1", "--standby", "host=127.0.0.2", "-q", "SELECT 1", "--stale-probe=both", "--intent", "ro"}, "--stale-probe both: needs a listener"},
	}
	for _, c := range cases {
		code, _, errs := runCLI(t, env, append(c.args, "--results", filepath.Join(dir, "results"))...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", c.args, code, errs, c.want)
		}
	}
}
