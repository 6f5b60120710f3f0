package all

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/workload"
)

func TestEveryWorkloadRegistered(t *testing.T) {
	for _, name := range []string{"stress", "scan", "tpcc", "readahead"} {
		if _, ok := workload.Get(name); !ok {
			t.Errorf("workload %q not registered", name)
		}
	}
}

// Workloads never import the runner, the cluster, the listener, the target or the report.
func TestWorkloadsKeepTheirLayer(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "github.com/agbench/agbench/internal/workload/...").CombinedOutput()
	if err != nil {
		t.Skipf("go list: %v %s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"/internal/runner", "/internal/cluster", "/internal/listener", "/internal/report", "/internal/target"} {
			if strings.HasSuffix(dep, banned) {
				t.Errorf("a workload imports %s", dep)
			}
		}
	}
}
