package hostmetrics

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

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

// FuzzScrapes: any range query's answer a server could send gives scrapes in time order,
// each sample under the scrape of its own time, none made up, and a first scrape from any
// moment that is at or after it with none earlier that is.
func FuzzScrapes(f *testing.F) {
	f.Add([]byte(matrix), int64(1001e3))
	f.Add([]byte(`[{"metric":{"__name__":"up"},"values":[[1,"NaN"],[1,"0"]]},{"metric":{},"values":[[1,"1"]]}]`), int64(0))
	f.Add([]byte(`[{"metric":{"__name__":"node_cpu_seconds_total"},"values":[[5,"1"],[3,"2"],[5,"3"]]}]`), int64(4e3))
	f.Fuzz(func(t *testing.T, data []byte, from int64) {
		var m model.Matrix
		if json.Unmarshal(data, &m) != nil {
			return
		}
		in, ups := 0, 0
		for _, s := range m {
			in += len(s.Values)
			if s.Metric[model.MetricNameLabel] == metricUp {
				ups++
			}
		}
		if n := len(targets(m)); n > ups {
			t.Fatalf("%d targets of %d up series", n, ups)
		}
		l := indexScrapes(m)
		out := 0
		for i, s := range l {
			if i > 0 && !l[i-1].at.Before(s.at) {
				t.Fatalf("scrapes out of order: %v then %v", l[i-1].at, s.at)
			}
			for _, x := range s.samples {
				if x.Timestamp != s.at || x.Metric[model.MetricNameLabel] == metricUp {
					t.Fatalf("sample %v under the scrape of %v", x, s.at)
				}
			}
			out += len(s.samples)
		}
		if out > in || l.interval() < 0 {
			t.Fatalf("%d samples of %d, interval %v", out, in, l.interval())
		}
		s := l.firstFrom(model.Time(from))
		if s != nil && s.at.Before(model.Time(from)) {
			t.Fatalf("firstFrom(%d) gave %v", from, s.at)
		}
		for _, x := range l {
			if !x.at.Before(model.Time(from)) && (s == nil || x.at.Before(s.at)) {
				t.Fatalf("firstFrom(%d) = %v, but %v is earlier", from, s, x.at)
			}
		}
		if u := l.firstUpFrom(model.Time(from)); u != nil && (!u.up || u.at.Before(model.Time(from))) {
			t.Fatalf("firstUpFrom(%d) gave %+v", from, u)
		}
		if u := l.lastUp(model.Time(from)); u != nil && (!u.up || u.at.After(model.Time(from))) {
			t.Fatalf("lastUp(%d) gave %+v", from, u)
		}
	})
}
