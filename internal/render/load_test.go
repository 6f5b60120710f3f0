package render

import (
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/table"
)

// A figure a step did not measure (the servers' MB/s through a listener, latency of a step
// with no successful operation) is "–" in the table, never 0.
func TestStressTableShowsAbsentFigures(t *testing.T) {
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	res := &result.Result{Steps: []result.Step{{Index: 0, Params: map[string]string{"threads": "1"}, VUs: 1, Complete: true,
		Window: result.Window{Start: start, End: start.Add(2 * time.Second)},
		Ops:    map[string]*result.Op{"query": {Errors: 4}}}}}
	var b strings.Builder
	if err := table.Write(&b, res, "threads", StressColumns); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if got := strings.Fields(lines[len(lines)-1]); strings.Join(got, " ") != "1 2.00 0 – 0 – – 4" {
		t.Errorf("row %q", got)
	}
}

// A recorded stress or scan run's table and footer, rebuilt from its result, begin and end
// what the command printed (the analysis between them is analyze's text).
func TestLoadOfRecordedRuns(t *testing.T) {
	for name, cols := range map[string][]table.Column{"stress": StressColumns, "stress-rerun": StressColumns, "scan": ScanColumns} {
		r := recorded(t, name)
		golden := commandGolden(t, name)
		path := golden[strings.LastIndex(golden, "result  ")+len("result  "):]
		path = strings.TrimSuffix(path, "\n")
		var all, foot strings.Builder
		Load(&all, r, nil, path, cols, "")
		Footer(&foot, r, path, table.Landed(r))
		head, ok := strings.CutSuffix(all.String(), foot.String())
		if !ok || !strings.HasPrefix(golden, head) || !strings.HasSuffix(golden, foot.String()) || !strings.Contains(head, "time (s)") {
			t.Errorf("%s: the table and footer are not how the command's output begins and ends:\n%s", name, all.String())
		}
	}
}
