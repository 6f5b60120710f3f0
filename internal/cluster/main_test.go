package cluster_test

import (
	"testing"

	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// The package's real-server tests that change no cluster share one, destroyed when they end.
func TestMain(m *testing.M) { clustertest.Main(m) }
