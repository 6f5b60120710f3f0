package main

import (
	"path/filepath"
	"testing"
)

// Bad observe input is refused before anything is made: exit 2, the flag named.
func TestDrillObserveBadInput(t *testing.T) {
	results := t.TempDir()
	wantRefused(t, map[string]string{"AGBENCH_HOME": t.TempDir()}, filepath.Join(results, "*"), []badInput{
		{[]string{"drill", "--fault", "observe", "--primary", "host=127.0.0.1 port=1 user=a"}, "--standby: at least one"},
		{[]string{"drill", "--fault", "observe", "--standby", "host=127.0.0.1 port=1 user=a"}, "--primary: required"},
		{[]string{"drill", "--fault", "observe", "--primary", "host=127.0.0.1 port=1", "--standby", "host=127.0.0.1 port=2",
			"--patroni", "127.0.0.1:8008"}, "--patroni \"127.0.0.1:8008\""},
		{[]string{"drill", "--fault", "planned", "--patroni", "http://127.0.0.1:8008"}, "--patroni: only with --fault observe"},
	}, "--results", results)
}
