package diskio

import (
	"testing"

	"github.com/agbench/agbench/internal/importcheck"
)

// The package doc's promise: diskio does not reach up into the command layer, the cluster,
// the runner, the workloads or the report.
func TestImportsKeepTheLayering(t *testing.T) {
	importcheck.Forbid(t, ".", "/cmd/", "/internal/cluster", "/internal/runner", "/internal/workload", "/internal/report")
}
