package commands

import (
	"testing"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

func TestMain(m *testing.M) { e2etest.Main(m) }

// sharedCluster is the package's shared cluster, a primary and one async standby, for the
// tests that do not change its shape (each works in a database of its own), and the
// environment that runs agbench on it.
func sharedCluster(t *testing.T) (*cluster.Topology, map[string]string) {
	t.Helper()
	return e2etest.Shared(t, clustertest.Options{Standbys: 1})
}
