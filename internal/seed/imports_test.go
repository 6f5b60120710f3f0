package seed

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports keeps the layering of the package doc: seeding never reaches into the runner,
// workloads, the listener, the analysis or the report.
func TestImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"/internal/runner", "/internal/workload", "/internal/listener", "/internal/analyze", "/internal/report"} {
			if strings.HasPrefix(dep, "github.com/agbench/agbench"+banned) {
				t.Errorf("internal/seed depends on %s", dep)
			}
		}
	}
}
