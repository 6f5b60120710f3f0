package catalogue

import (
	"testing"

	"github.com/agbench/agbench/internal/cgroup"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// Catalogue cases of modelled hosts (nodes in control groups of their own).
func init() {
	routingStress := func(t *testing.T, env *catEnv, clusterName string) (string, string) {
		res := env.Results(t)
		_, out := env.Run(t, "stress", "--cluster", clusterName, "--query", "SELECT 1",
			"--threads", "1,2", "--duration", "1s", "--compare", "routing=off,on", "--results", res)
		return out, res
	}
	addCase(catalogueCase{
		Verdict: "shared-host",
		Name:    "stress --compare routing=off,on on a primary and a standby sharing the machine without budgets",
		Invalid: func(t *testing.T, env *catEnv) (string, string) {
			return routingStress(t, env, env.Cluster(t).Name)
		},
		Control: func(t *testing.T, env *catEnv) (string, string) {
			if _, err := cgroup.Detect(); err != nil {
				t.Skipf("the control needs modelled hosts: %v", err)
			}
			topo := clustertest.NewIn(t, env.Home, clustertest.Options{Standbys: 1, Name: "cathosts", Host: cgroup.Budget{CPUs: 0.5, Memory: 512 << 20}})
			return routingStress(t, env, topo.Name)
		},
	})
}
