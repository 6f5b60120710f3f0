package privilege

import (
	"testing"

	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// The package's real-server tests share one cluster, destroyed when they end.
func TestMain(m *testing.M) { clustertest.Main(m) }
