package main

import (
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/cluster"
)

func TestClusterBadInputExits2AndMakesNothing(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"AGBENCH_HOME": home}
	cases := [][]string{
		{"cluster", "create", "--standbys", "12"},
		{"cluster", "create", "--commit", "maybe"},
		{"cluster", "create", "--name", "Bad Name"},
		{"cluster", "create", "--set", "port=1"},
		{"cluster", "create", "--pg-bin", home},
		{"cluster", "create", "--standbys", "x"},
		{"cluster", "status", "--name", "nope"},
		{"cluster", "failover", "--name", "nope"},
		{"cluster", "frobnicate"},
		{"cluster", "destroy", "extra-arg"},
		{"cluster", "create", "--host-memory", "lots"},
		{"cluster", "create", "--host-memory", "0"},
		{"cluster", "create", "--host-cpus", "-1"},
		{"cluster", "create", "--host-cpus", "4096"},
		{"cluster", "create", "--host-memory", "100M"},
		{"cluster", "create", "--host-read-bps", "10"},
		{"cluster", "create", "--host-write-bps", "fast"},
		{"cluster", "create", "--host-read-iops", "1.5"},
		{"cluster", "create", "--host-write-iops", "3"},
		{"cluster", "create", "--host-cpus", "0.5", "--host-cpu-shares", "1"},
		{"cluster", "create", "--host-cpu-shares", "500"},
		{"cluster", "hosts", "--name", "nope", "--budgets", "off"},
		{"cluster", "hosts", "--budgets", "maybe"},
		{"cluster", "hosts"},
	}
	for _, args := range cases {
		code, _, errs := runCLI(t, env, args...)
		if code != 2 || errs == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, errs)
		}
		if flag := args[len(args)-2]; strings.HasPrefix(flag, "--host-") && !strings.Contains(errs, flag) {
			t.Errorf("%v: the message %q does not name %s", args, errs, flag)
		}
	}
	if names, _ := cluster.List(home); len(names) != 0 {
		t.Fatalf("bad input made clusters: %v", names)
	}
}
