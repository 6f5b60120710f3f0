package commands

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

func TestClusterCommandsEndToEnd(t *testing.T) {
	t.Parallel()
	clustertest.Require(t)
	home := clustertest.Home(t)
	env := map[string]string{"AGBENCH_HOME": home}
	base, err := clustertest.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := e2etest.Run(t, env, "cluster", "create", "--name", "cli", "--standbys", "1", "--commit", "sync",
		"--base-port", itoa(base), "--set", "fsync=off")
	if code != 0 {
		t.Fatalf("create: %d %s %s", code, out, errs)
	}
	defer e2etest.Run(t, env, "cluster", "destroy", "--name", "cli")
	if !strings.Contains(out, "standby1") || !strings.Contains(out, "streaming") {
		t.Fatalf("create output: %s", out)
	}
	code, out, _ = e2etest.Run(t, env, "cluster", "status", "--name", "cli", "--json")
	var st cluster.Status
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || len(st.Nodes) != 2 || st.Nodes[1].SyncState != "quorum" {
		t.Fatalf("status --json: %d %s", code, out)
	}
	code, out, _ = e2etest.Run(t, env, "cluster", "env", "--name", "cli", "--node", "standby1")
	if code != 0 || !strings.Contains(out, "export PGPORT="+itoa(base+1)) || !strings.Contains(out, "PGPASSFILE=") {
		t.Fatalf("env: %s", out)
	}
	if strings.Contains(out, "PGPASSWORD") {
		t.Fatal("env prints a password")
	}
	if code, _, errs := e2etest.Run(t, env, "cluster", "hosts", "--name", "cli", "--budgets", "off"); code != 2 || !strings.Contains(errs, "no modelled hosts") {
		t.Errorf("cluster hosts on a cluster without budgets: exit %d, %s", code, errs)
	}
	code, out, _ = e2etest.Run(t, env, "cluster", "failover", "--name", "cli")
	if code != 0 || !strings.Contains(out, "primary -> standby1") {
		t.Fatalf("failover: %d %s", code, out)
	}
	// One synchronous standby: the new primary's commits wait until the old one rejoins.
	if !strings.Contains(out, "commits waited for") || !strings.Contains(out, "standby1 had no synchronous standby until primary rejoined") {
		t.Errorf("failover of a sync cluster of one standby does not say that commits waited for the old primary: %s", out)
	}
	for _, verb := range []string{"stop", "start"} {
		if code, out, errs := e2etest.Run(t, env, "cluster", verb, "--name", "cli"); code != 0 {
			t.Fatalf("%s: %s %s", verb, out, errs)
		}
	}
	code, out, _ = e2etest.Run(t, env, "cluster", "list")
	if code != 0 || !strings.Contains(out, "cli") {
		t.Fatalf("list: %s", out)
	}
	if code, _, errs := e2etest.Run(t, env, "cluster", "destroy", "--name", "cli"); code != 0 {
		t.Fatal(errs)
	}
	if names, _ := cluster.List(home); len(names) != 0 {
		t.Fatalf("after destroy: %v", names)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
