package readahead

import (
	"testing"

	"github.com/agbench/agbench/internal/importcheck"
)

// The workload reaches the server through Server: it must not import the cluster, the
// runner or the report.
func TestImportsKeepTheLayering(t *testing.T) {
	importcheck.Forbid(t, ".", "/internal/cluster", "/internal/runner", "/internal/report", "/internal/listener")
}
