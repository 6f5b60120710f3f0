package hostmetrics

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/agbench/agbench/internal/result"
)

// FuzzParse: any body either is refused or gives a Reading whose figures against a later
// reading of the same body are finite, shares within 0..1, and each figure either present
// or absent with a reason, never both.
func FuzzParse(f *testing.F) {
	f.Add([]byte(body("100", "50", "1000", "5", "0", "1000.25")))
	f.Add([]byte("node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} NaN\nnode_cpu_seconds_total{cpu=\"1\",mode=\"user\"} +Inf\n"))
	f.Add([]byte("node_cpu_seconds_total{mode=\"idle\"} -5\nnode_disk_reads_completed_total{device=\"\"} 1\nnode_time_seconds 1e308\n"))
	f.Add([]byte("# TYPE node_cpu_seconds_total summary\nnode_cpu_seconds_total{quantile=\"0.5\"} 1\n"))
	f.Add([]byte("\xff\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		t0 := time.Unix(1000, 0)
		r, err := Parse(data, expfmt.FmtText, t0)
		if err != nil {
			return
		}
		r2, err := Parse(data, expfmt.FmtText, t0.Add(time.Second))
		if err != nil {
			t.Fatalf("the same body parsed once and not twice: %v", err)
		}
		fig := Between("n", r, r2)
		for name, v := range fig.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%s = %v", name, v)
			}
			if strings.HasSuffix(name, "cpu_busy") || strings.HasSuffix(name, "."+result.DiskUtil) {
				if v < 0 || v > 1 {
					t.Fatalf("%s = %v: a share out of 0..1", name, v)
				}
			}
			if _, ok := fig.Absent[name]; ok {
				t.Fatalf("%s both present and absent", name)
			}
		}
		for name, why := range fig.Absent {
			if why == "" {
				t.Fatalf("%s absent without a reason", name)
			}
		}
	})
}
