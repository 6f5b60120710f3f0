package report

import (
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/measure"
	"github.com/agbench/agbench/internal/result"
)

// The stale-read probe's section becomes a table: a row per step and node, the share of
// stale reads, and "-" for what was not measured (no read saw the row; tpcc's own-write
// reads have no visibility time or session start).
func TestStaleTable(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	hist := func(us ...int64) result.Hist {
		h := measure.NewHistogram()
		for _, v := range us {
			_ = h.RecordValue(v)
		}
		r, err := result.NewHist(h)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := &result.Result{Schema: 1, Complete: true, Meta: result.Meta{Command: "stress"}}
	st := result.Step{Index: 0, VUs: 1, Params: map[string]string{"threads": "1"}, Window: result.Window{Start: t0, End: t0.Add(10 * time.Second)}, Complete: true,
		Ops: map[string]*result.Op{"query": {Count: 10, Latency: hist(1000)}}}
	if err := st.SetExtra(result.ExtraStale, result.StaleStep{Mode: result.StaleEventual, Errors: 1, Nodes: map[string]result.StaleNode{
		"standby1": {Reads: 4, Stale: 1, Visible: hist(0, 0, 0, 3000), Session: hist(2000, 2000, 2000, 2000)},
		"standby2": {Reads: 1, Stale: 1, Unseen: 1, Session: hist(2000)},
	}}); err != nil {
		t.Fatal(err)
	}
	// tpcc's own-write reads: no visibility time or session start, shown absent.
	if err := st.SetExtra(result.ExtraStaleOwn, result.StaleStep{Mode: result.StaleOwnWrites, Nodes: map[string]result.StaleNode{
		"standby1": {Reads: 8, Stale: 2},
	}}); err != nil {
		t.Fatal(err)
	}
	r.Steps = append(r.Steps, st)
	tb := build(t, NewRun("results/stale", r))[0].StaleTable()
	if len(tb.Rows) != 3 {
		t.Fatalf("rows %v", tb.Rows)
	}
	row := func(i int) string {
		var s []string
		for _, c := range tb.Rows[i] {
			s = append(s, c.Text)
		}
		return strings.Join(s, "|")
	}
	if got := row(0); !strings.HasPrefix(got, "1|eventual|standby1|4|1|25|") {
		t.Errorf("standby1 row %s", got)
	}
	if got := row(1); !strings.HasPrefix(got, "1|eventual|standby2|1|1|100|-|-|") || !strings.HasSuffix(got, "|1|1") {
		t.Errorf("standby2 row %s", got)
	}
	if got := row(2); got != "1|own-writes|standby1|8|2|25|-|-|-|-|0|0" {
		t.Errorf("own-writes row %s", got)
	}
	r.Steps[0].Extra = nil
	if tb := build(t, NewRun("results/stale", r))[0].StaleTable(); len(tb.Rows) != 0 {
		t.Fatalf("a run without the probe has a stale table: %v", tb.Rows)
	}
}
