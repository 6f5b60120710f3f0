package e2etest

import (
	"path/filepath"
	"testing"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// Shared returns the package's shared cluster of shape o (clustertest.Shared: made on first
// use, with an ordinary login beside the superuser, destroyed when the package's tests end)
// and the environment that runs agbench on it (its home, so that --cluster finds it). Tests
// that share it do not change its shape, and each names what it makes as its own (or works
// in clustertest.OwnDatabase) and judges only its own work.
func Shared(t testing.TB, o clustertest.Options) (*cluster.Topology, map[string]string) {
	t.Helper()
	topo := clustertest.Shared(t, o)
	home := filepath.Dir(filepath.Dir(topo.Dir)) // topo.Dir is cluster.ClusterDir(home, name)
	return topo, map[string]string{"AGBENCH_HOME": home}
}
