package report

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/report/reporttest"
	"github.com/agbench/agbench/internal/result"
)

// drillResult is a drill of two cycles as internal/drill writes one: a kill-primary failover
// whose writes stop for 1.2 s, with a timeline, events and lag; and a kill-standby whose
// result holds no timeline (as a drill's from before agbench kept one).
func drillResult(t *testing.T) *result.Result {
	t.Helper()
	start := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	r := &result.Result{Schema: result.SchemaVersion, Complete: true, Meta: result.Meta{Tool: "agbench", ToolVersion: "test",
		Command: "drill", Args: []string{"drill", "--cluster", "lab", "--fault", "kill-primary", "--cycles", "2"}, Started: start,
		Host: result.Host{Hostname: "box", OS: "linux", Arch: "amd64", Cores: 2}}}
	tl := &result.DrillTimeline{Start: at(0), IntervalMS: 100}
	for i := range 50 { // 5 s: the fault at 2 s, writes back at 3.2 s
		w, we, rd := int64(120), int64(0), int64(300)
		if i >= 20 && i < 32 {
			w, we = 0, 8
		}
		tl.Writes, tl.WriteErrors, tl.Reads, tl.ReadErrors = append(tl.Writes, w), append(tl.WriteErrors, we), append(tl.Reads, rd), append(tl.ReadErrors, 0)
	}
	for i := range 25 {
		if i >= 10 && i < 16 {
			continue // no primary answered
		}
		tl.Lag = append(tl.Lag, result.DrillLag{At: at(float64(i) * 0.2), Standby: "standby1", LagBytes: int64(100 + 50*i)})
	}
	f := func(v float64) *float64 { return &v }
	wal, present := int64(184), int64(3)
	c1 := result.DrillCycle{Cycle: 1, Fault: "kill-primary", From: "primary", To: "standby1", FaultAt: at(2), FailoverSeconds: f(0.9),
		WriteBackSeconds: f(1.2), ReadBackSeconds: f(0.1), WritesBlockedSeconds: f(1.2), Acked: 6000, InDoubt: 8, InDoubtPresent: &present,
		WALBytesLacked: &wal, Writable: []string{"standby1"}, Streaming: []string{"primary"}, OldPrimary: "streaming", Checked: true,
		RerouteWriteSeconds: f(1.1), RerouteNote: "",
		Events: []result.DrillEvent{{At: at(2), Event: result.EventFault}, {At: at(2.05), Event: result.EventDetected},
			{At: at(2.95), Event: result.EventPromoted, Detail: "standby1"}, {At: at(2.1), Event: result.EventReadsBack},
			{At: at(3.1), Event: result.EventRerouteWrite}, {At: at(3.2), Event: result.EventWritesBack}},
		Timeline: tl}
	c2 := result.DrillCycle{Cycle: 2, Fault: "kill-primary", From: "standby1", FaultAt: at(10), Acked: 10, Problems: []string{"kill standby1: refused"}}
	for i, dc := range []result.DrillCycle{c1, c2} {
		st := result.Step{Index: i, Point: i, Complete: true, Window: result.Window{Start: at(float64(i) * 8), End: at(float64(i)*8 + 5)},
			Errors: []result.ErrorClass{{SQLState: "08006", Count: 96}}}
		if err := st.SetExtra(result.ExtraDrill, dc); err != nil {
			t.Fatal(err)
		}
		r.Steps = append(r.Steps, st)
	}
	acked, lost, doubt := int64(6000), int64(0), int64(8)
	run := result.DrillRun{Fault: "kill-primary", Commit: "sync", Cycles: 2, CyclesDone: 1, Acked: &acked, Lost: &lost, InDoubt: &doubt, InDoubtPresent: &present, WriteBackP50: f(1.2), WriteBackMax: f(1.2),
		Verdict: "sync commit: 0 of 6,000 acknowledged commits lost in 1 failover (kill-primary); writes back after p50 1.2 s, max 1.2 s",
		Failed:  []string{"cycle 2: not checked: kill standby1: refused"}, Left: "whole: primary standby1, streaming standbys primary"}
	if err := r.SetExtra(result.ExtraDrill, run); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestDrillReport: a drill's report leads with its verdict (and what failed), tables its
// cycles with absent figures as "–", and draws per cycle a timeline of writes with the
// fault and the other events marked, the reads, and the replication lag; a cycle without a
// timeline gets no chart. In headless Chromium every chart draws.
func TestDrillReport(t *testing.T) {
	exps := build(t, NewRun("results/20261126T080000Z-drill", drillResult(t)))
	if len(exps) != 1 {
		t.Fatalf("%d experiments", len(exps))
	}
	e := exps[0]
	h := e.Headline()
	if !strings.HasPrefix(h, "sync commit: 0 of 6,000 acknowledged commits lost") || !strings.Contains(h, "FAILED: cycle 2: not checked") {
		t.Fatalf("headline %q", h)
	}
	dt := e.DrillTable()
	if len(dt.Rows) != 2 {
		t.Fatalf("%d rows", len(dt.Rows))
	}
	row := func(r int, col string) string {
		for i, c := range dt.Columns {
			if c == col {
				return dt.Rows[r][i].Text
			}
		}
		t.Fatalf("no column %q in %v", col, dt.Columns)
		return ""
	}
	for _, c := range []struct {
		row       int
		col, want string
	}{
		{0, "lost", "0"}, {0, "writes blocked s", "1.20"}, {0, "reroute write s", "1.10"}, {0, "reroute read s", "–"},
		{0, "WAL lacked", "184B"}, {0, "errors by SQLSTATE", "08006 96"}, {0, "after", "old primary streaming"},
		{1, "lost", "–"}, {1, "to", "–"}, {1, "writes back s", "–"}, {1, "committed", "–"},
	} {
		if got := row(c.row, c.col); got != c.want {
			t.Errorf("cycle %d %s: %q, want %q", c.row+1, c.col, got, c.want)
		}
	}
	if e.Tables()[0].Name != "drill-cycles" {
		t.Errorf("first table %q, want the cycles", e.Tables()[0].Name)
	}
	page, err := HTML(exps, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	for _, want := range []string{`class="chart timeseries drill-timeline"`, `class="chart timeseries drill-reads"`, `class="chart timeseries lag drill-lag"`,
		">fault<", ">promoted<", ">writes back<", ">reroute write<", "cycle 1: kill-primary — 0 of 6,000 acknowledged lost, primary → standby1"} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if n := strings.Count(html, "drill-timeline"); n != 1 {
		t.Errorf("%d timelines; want one (cycle 2 has none)", n)
	}
	if strings.Contains(html, `class="chart throughput"`) || strings.Contains(html, "knee at") {
		t.Error("a drill's report draws a load curve")
	}
	var warned bool
	for _, f := range e.Findings() {
		warned = warned || (f.Kind == "warning" && strings.Contains(f.Text, "cycle 2: not checked"))
	}
	if !warned {
		t.Errorf("findings %+v lack the failed check", e.Findings())
	}

	chromium := reporttest.Require(t)
	file := filepath.Join(t.TempDir(), "drill.html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sels := []string{"svg.chart.drill-timeline path.line", "svg.chart.drill-reads path.line", "svg.chart.drill-lag path.line", "svg .mark", "table.data"}
	got, err := reporttest.Render(ctx, chromium, file, sels)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Requests) > 0 || len(got.Problems) > 0 {
		t.Errorf("requests %v, problems %v", got.Requests, got.Problems)
	}
	if charts := strings.Count(html, `<svg class="chart`); got.Drawn != charts || charts != 3 {
		t.Errorf("%d charts in the file, %d drawn; want 3", charts, got.Drawn)
	}
	for _, sel := range sels {
		if got.Counts[sel] == 0 {
			t.Errorf("no %s drew", sel)
		}
	}
	saveScreenshot(t, "drill-report-screenshot.png", got.Screenshot)
}

// The longest time without a synchronous standby: a lower bound when that cycle's load ended
// first, and counted over the cycles where it was measured, not every checked cycle.
func TestNoSyncKPI(t *testing.T) {
	v := 4.5
	run := &result.DrillRun{CyclesDone: 3, NoSyncCycles: 2, NoSyncMeasuredCycles: 2, NoSyncMax: &v, NoSyncMaxOpen: true}
	k := noSyncKPI("", run)
	if k.Value != "at least 4.50 s" || k.Note != "longest after a failover; in 2 of 2 cycles where it was measured" {
		t.Fatalf("%+v", k)
	}
	run.NoSyncMaxOpen = false
	if k := noSyncKPI("", run); k.Value != "4.50 s" {
		t.Fatalf("%+v", k)
	}
}

// A time without a synchronous standby still running at the load's end is a lower bound in
// every output: "4.50+" in the table and in the CSV, never the bare 4.5.
func TestNoSyncCellOpenInCSV(t *testing.T) {
	r := drillResult(t)
	f := func(v float64) *float64 { return &v }
	dc, err := r.Steps[0].DrillCycle()
	if err != nil {
		t.Fatal(err)
	}
	dc.SyncGap = &result.DrillSyncGap{Node: "standby1", Samples: 20, NoSyncSeconds: f(4.5), NoSyncFrom: f(0.5), NoSyncTo: f(5), Open: true}
	if err := r.Steps[0].SetExtra(result.ExtraDrill, dc); err != nil {
		t.Fatal(err)
	}
	dt := build(t, NewRun("results/20261126T080000Z-drill", r))[0].DrillTable()
	b, err := CSV(dt)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	if !strings.Contains(lines[0], "no sync standby s") || !strings.Contains(lines[1], ",4.50+,") {
		t.Fatalf("csv:\n%s", b)
	}
}
