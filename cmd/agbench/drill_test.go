package main

import (
	"path/filepath"
	"testing"
)

// Bad input is refused before anything is made: exit 2, the flag named, no result folder.
func TestDrillBadInput(t *testing.T) {
	results := t.TempDir()
	wantRefused(t, map[string]string{"AGBENCH_HOME": t.TempDir()}, filepath.Join(results, "*"), []badInput{
		{[]string{"drill", "--cluster", "lab"}, "--fault is required"},
		{[]string{"drill", "--fault", "unplug"}, `--fault "unplug"`},
		{[]string{"drill", "--fault", "planned", "--cycles", "0"}, "--cycles 0"},
		{[]string{"drill", "--fault", "planned", "--workload", "bogus"}, `--workload "bogus"`},
		{[]string{"drill", "--fault", "observe", "--workload", "tpcc"}, "--workload tpcc: not with --fault observe"},
		{[]string{"drill", "--fault", "planned", "--vus", "0", "--read-vus", "-1"}, "--read-vus -1"},
		{[]string{"drill", "--fault", "planned", "--between", "0s", "--commit-wait", "-1s"}, "--commit-wait"},
		{[]string{"drill", "--fault", "kill-primary", "--primary", "host=127.0.0.1 port=5432"}, "only into servers agbench started"},
		{[]string{"drill", "--fault", "freeze-primary", "--detect-timeout", "0s"}, "--detect-timeout 0s"},
		{[]string{"drill", "--fault", "planned", "--cluster", "no-such"}, "no-such"},
		{[]string{"drill", "--fault", "planned", "extra"}, "extra"},
		{[]string{"drill", "--fault", "wal-full", "--wal-fs-size", "1M"}, "--wal-fs-size 1.0 MiB"},
		{[]string{"drill", "--fault", "wal-full", "--wal-fs-size", "lots"}, `--wal-fs-size "lots"`},
	}, "--results", results)
}
