package main

import (
	"strings"
	"testing"
)

func TestTPCCBadInput(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"tpcc", "build"}, []string{"no target"}},
		{[]string{"tpcc", "check", "--cluster", "a", "--primary", "host=x"}, []string{"one or the other"}},
		{[]string{"tpcc", "run", "--primary", "host=x", "--read-intent"}, []string{"--read-intent: needs a standby"}},
		{[]string{"tpcc", "run", "--primary", "host=x", "--listener", "host=y", "--compare", "routing=off,on"}, []string{"not --listener"}},
		{[]string{"tpcc", "build", "--primary", "host=x", "--warehouses", "0", "--build-vus", "0", "--seed", "-1"},
			[]string{"--warehouses 0", "--build-vus 0", "--seed -1"}},
		{[]string{"tpcc", "run", "--primary", "host=x", "--vus", "1,x", "--mode", "fast", "--duration", "0s", "--compare", "threads=1,2"},
			[]string{"--vus", "--mode \"fast\"", "--duration", "routing=off,on"}},
		{[]string{"tpcc", "run", "--primary", "port=notanumber"}, []string{"--primary"}},
		{[]string{"tpcc", "drop", "--cluster", "Bad Name"}, []string{`--cluster "Bad Name"`}},
		{[]string{"tpcc", "run", "--primary", "host=x", "--terminals", "3", "--sessions", "4"},
			[]string{"--terminals 3: fewer than the pool's --sessions 4"}},
		{[]string{"tpcc", "run", "--primary", "host=x", "--sessions", "4", "--think-scale", "2"},
			[]string{"--sessions needs --terminals", "--think-scale 2"}},
		{[]string{"tpcc", "run", "--primary", "host=x", "--think-scale", "0.5"}, []string{"--think-scale needs --terminals"}},
		{[]string{"tpcc", "run", "--primary", "host=x", "--terminals", "-1"}, []string{"--terminals -1: must be 1 or more"}},
		{[]string{"tpcc", "run", "--primary", "host=x", "--terminals", "10", "--vus", "4", "--rate", "5", "--sessions", "-1"},
			[]string{"--vus 4: not with --terminals", "--rate: not with --terminals", "--sessions -1"}},
		{[]string{"tpcc", "run", "--primary", "host=x", "--standby", "host=y", "--terminals", "10", "--read-intent"},
			[]string{"--read-intent and --compare: not with --terminals"}},
	}
	for _, c := range cases {
		code, _, errs := runCLI(t, map[string]string{"AGBENCH_HOME": t.TempDir()}, c.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", c.args, code, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: stderr %q does not mention %q", c.args, errs, w)
			}
		}
	}
}
