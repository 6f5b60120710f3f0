package table

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/result"
)

// A fixed-rate step shows the rate it asked, what it started per second and its late
// starts; a closed-loop step's rate cells are absent, and a closed-loop run has no such
// columns at all.
func TestRateColumns(t *testing.T) {
	fixed := step(0, "1", "", 0, 2, true)
	fixed.Rate, fixed.LateStarts = 2000, 572
	fixed.Ops = map[string]*result.Op{"query": {Count: 370, Errors: 8}}
	closed := step(1, "2", "", 0, 2, true)
	closed.Ops = map[string]*result.Op{"query": {Count: 900}}
	r := &result.Result{Steps: []result.Step{fixed, closed}}
	var b bytes.Buffer
	if err := Write(&b, r, "threads", WithRate(r, nil)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if got := strings.Join(strings.Fields(lines[0]), " "); got != "threads asked/s done/s late" {
		t.Errorf("header %q", got)
	}
	if got := strings.Join(strings.Fields(lines[1]), " "); got != "1 2000 189 572" {
		t.Errorf("fixed-rate row %q", got)
	}
	if got := strings.Join(strings.Fields(lines[2]), " "); got != "2 – – –" {
		t.Errorf("closed-loop row %q", got)
	}
	r.Steps = r.Steps[1:]
	if cols := WithRate(r, nil); len(cols) != 0 {
		t.Errorf("closed-loop run got rate columns %v", cols)
	}
}
