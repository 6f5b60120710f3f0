package hostmetrics

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

// matrix is a range query's answer as a Prometheus server gives it: up and one CPU counter
// of scrapes at 1000, 1001 (failed), 1002 and 1003.5 s.
const matrix = `[
 {"metric":{"__name__":"up","instance":"h:9100","job":"node"},"values":[[1000,"1"],[1001,"0"],[1002,"1"],[1003.5,"1"]]},
 {"metric":{"__name__":"node_cpu_seconds_total","cpu":"0","mode":"idle","instance":"h:9100","job":"node"},"values":[[1000,"10"],[1002,"12"],[1003.5,"13"]]},
 {"metric":{"__name__":"node_cpu_seconds_total","cpu":"0","mode":"user","instance":"h:9100","job":"node"},"values":[[1000,"5"],[1002,"5.5"]]}
]`

func mustMatrix(t *testing.T, s string) model.Matrix {
	t.Helper()
	var m model.Matrix
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestScrapesAreUpsSamples(t *testing.T) {
	l := indexScrapes(mustMatrix(t, matrix))
	if len(l) != 4 {
		t.Fatalf("%d scrapes: %+v", len(l), l)
	}
	if l[1].up || len(l[1].samples) != 0 || !l[2].up || len(l[2].samples) != 2 || len(l[3].samples) != 1 {
		t.Errorf("scrapes %+v", l)
	}
	if got := l.interval(); got != time.Second {
		t.Errorf("interval %v; want the median gap, 1 s", got)
	}
	for _, c := range []struct {
		at   float64
		want model.Time
	}{{999, 1000e3}, {1000, 1000e3}, {1000.5, 1001e3}, {1003.5, 1003.5e3}} {
		if s := l.firstFrom(model.TimeFromUnixNano(int64(c.at * 1e9))); s == nil || s.at != c.want {
			t.Errorf("firstFrom(%v) = %+v; want the scrape at %v", c.at, s, c.want)
		}
	}
	// The scrape at 1001 s failed: passed over by those that want one that worked.
	if s := l.firstUpFrom(1000.5e3); s == nil || s.at != 1002e3 {
		t.Errorf("firstUpFrom(1000.5) = %+v; want the scrape at 1002", s)
	}
	if s := l.lastUp(1001.5e3); s == nil || s.at != 1000e3 {
		t.Errorf("lastUp(1001.5) = %+v; want the scrape at 1000", s)
	}
	if s := l.lastUp(999e3); s != nil {
		t.Errorf("lastUp before the first: %+v", s)
	}
	if s := l.firstFrom(1004e3); s != nil {
		t.Errorf("a scrape after the last: %+v", s)
	}
	if s := l.latest(); s == nil || s.at != 1003.5e3 {
		t.Errorf("latest %+v", s)
	}
}

// A server whose up lacks the label that chose the host's series: each time of its CPU
// counter is a scrape, taken as up.
func TestScrapesWithoutUp(t *testing.T) {
	m := mustMatrix(t, matrix)[1:]
	l := indexScrapes(m)
	if len(l) != 3 || !l[0].up || !l[1].up || !l[2].up {
		t.Errorf("scrapes %+v", l)
	}
}

func TestTargetsOfTheUpSeries(t *testing.T) {
	m := mustMatrix(t, matrix)
	if got := targets(m); len(got) != 1 || got[0] != `{instance="h:9100", job="node"}` {
		t.Errorf("targets %q", got)
	}
	m = append(m, mustMatrix(t, `[{"metric":{"__name__":"up","instance":"g:9100","job":"node"},"values":[[1000,"1"]]}]`)...)
	if got := targets(m); len(got) != 2 {
		t.Errorf("targets %q; want two", got)
	}
	if got := targets(m[1:2]); len(got) != 0 {
		t.Errorf("targets of no up series: %q", got)
	}
}
