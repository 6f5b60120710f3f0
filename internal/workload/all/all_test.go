package all

import (
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
