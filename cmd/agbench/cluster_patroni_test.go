package main

import (
	"path/filepath"
	"testing"
)

// Bad Patroni input is refused before anything is made: exit 2, the flag named.
func TestClusterPatroniBadInput(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"AGBENCH_HOME": home}
	wantRefused(t, env, filepath.Join(home, "clusters", "*"), []badInput{
		{[]string{"cluster", "create", "--ha", "pacemaker"}, `--ha "pacemaker"`},
		{[]string{"cluster", "create", "--ha", "patroni", "--patroni-ttl", "5"}, "ttl ≥ loop_wait + 2 × retry_timeout"},
		{[]string{"cluster", "create", "--ha", "patroni", "--standbys", "0", "--commit", "async"}, "at least one standby"},
		{[]string{"cluster", "create", "--ha", "patroni", "--link-latency", "1ms"}, "--link-latency"},
		{[]string{"drill", "--fault", "planned", "--kill", "patroni"}, "--kill patroni: only with --fault kill-primary"},
		{[]string{"drill", "--fault", "kill-primary", "--kill", "etcd"}, `--kill "etcd"`},
	})
}
