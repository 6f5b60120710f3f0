package commands

import (
	"testing"

	"github.com/agbench/agbench/e2e/e2etest"
)

func TestMain(m *testing.M) { e2etest.Main(m) }

// sharedCluster is the package's shared cluster, a primary and one async standby, for the
// tests that do not change its shape; each works in a database of its own.
func sharedCluster(t *testing.T) *e2etest.Cluster {
	t.Helper()
	return e2etest.Shared(t, e2etest.Shape{Name: "cmd", Standbys: 1})
}
