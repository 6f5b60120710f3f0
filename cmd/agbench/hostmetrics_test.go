package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// Every command that reads the nodes' hosts takes the same flags and refuses the same bad
// input before anything runs.
func TestHostMetricsFlagsBadInput(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"AGBENCH_HOME": dir}
	res := filepath.Join(dir, "results")
	var cases []badInput
	for _, cmd := range [][]string{{"stress", "-q", "SELECT 1", "--primary", "host=127.0.0.1"}, {"scan", "--primary", "host=127.0.0.1"},
		{"tpcc", "run", "--primary", "host=127.0.0.1"}, {"drill", "--fault", "planned"}} {
		cases = append(cases,
			badInput{append(cmd, "--host-metrics", "primary=http://h1:9100", "--host-metrics", "primary=http://h2:9100"), "node primary named twice"},
			badInput{append(cmd, "--host-metrics", "primary=http://h1:9100", "--prometheus", "http://p:9090", "--prometheus-instance", "primary=h1"), "node primary named twice (also by --host-metrics)"},
			badInput{append(cmd, "--host-metrics", "primary"), `--host-metrics "primary": give NODE=URL`},
			badInput{append(cmd, "--host-metrics", "primary=h1:9100"), "give http://HOST:PORT[/metrics]"},
			badInput{append(cmd, "--prometheus-instance", "primary=h1"), "--prometheus-instance needs --prometheus"},
			badInput{append(cmd, "--prometheus", "http://p:9090", "--prometheus-label", "a-b"), `--prometheus-label "a-b": not a label name`},
			badInput{append(cmd, "--prometheus", "http://u:secret@p:9090"), "give the server's http://HOST:PORT"},
		)
	}
	cases = append(cases, badInput{[]string{"stress", "-q", "SELECT 1", "--primary", "host=127.0.0.1", "--sample=false", "--host-metrics", "primary=http://h:9100"}, "they need the samplers"})
	wantRefused(t, env, filepath.Join(res, "*"), cases, "--results", res)
	for _, c := range cases {
		if _, _, errs := runCLI(t, env, append(c.args, "--results", res)...); strings.Contains(errs, "secret") {
			t.Errorf("%v: the password in the message: %s", c.args, errs)
		}
	}
}

func TestHostMetricsFlagsInHelp(t *testing.T) {
	for _, cmd := range [][]string{{"stress"}, {"scan"}, {"tpcc", "run"}, {"drill"}} {
		code, out, _ := runCLI(t, nil, append(cmd, "--help")...)
		for _, want := range []string{"--host-metrics", "--prometheus ", "--prometheus-instance", "--prometheus-label"} {
			if code != 0 || !strings.Contains(out, want) {
				t.Errorf("%v --help (exit %d) lacks %s", cmd, code, want)
			}
		}
	}
}
