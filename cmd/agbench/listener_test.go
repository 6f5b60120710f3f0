package main

import (
	"strings"
	"testing"
)

func TestListenerBadInputExits2(t *testing.T) {
	env := map[string]string{"AGBENCH_HOME": t.TempDir()}
	p := "--primary=postgres://u@127.0.0.1:5432/db"
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"listener"}, []string{"--cluster NAME"}},
		{[]string{"listener", "--cluster", "nope"}, []string{"nope"}},
		{[]string{"listener", "--cluster", "lab", p}, []string{"one or the other"}},
		{[]string{"listener", p, "--routing-list", "(('a'"}, []string{"--routing-list", "at character"}},
		{[]string{"listener", p, "--routing-list", "('standby9')"}, []string{"'standby9'", "127.0.0.1:5432"}},
		{[]string{"listener", p, "--routing", "maybe", "--max-lag", "-1s", "--tls-cert", "x.pem", "--listen", "bogus"},
			[]string{"--routing", "--max-lag", "--tls-cert and --tls-key", "--listen"}},
		{[]string{"listener", "--primary", "host=/var/run/postgresql"}, []string{"Unix socket"}},
		{[]string{"listener", p, "--standby", "postgres://u@127.0.0.1:5432/db"}, []string{"given twice"}},
		{[]string{"listener", p, "--tls-require"}, []string{"--tls-require needs"}},
		{[]string{"listener", p, "--consistency", "strong", "--causal-wait", "-1s"}, []string{`--consistency: consistency "strong": want eventual or session`, "--causal-wait -1s: must be positive"}},
		{[]string{"listener", p, "--causal-wait", "0s"}, []string{"--causal-wait 0s: must be positive"}},
		{[]string{"listener", p, "--tls-cert", "/nonexistent.pem", "--tls-key", "/nonexistent.key"}, []string{"/nonexistent.pem"}},
	}
	for _, c := range cases {
		code, _, errs := runCLI(t, env, c.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", c.args, code, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: stderr %q lacks %q", c.args, errs, w)
			}
		}
	}
}
