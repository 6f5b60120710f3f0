package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/result"
)

func TestBuildSweepWithVariants(t *testing.T) {
	r := rorStudy().result(t)
	exps := build(t, NewRun("results/20261122T000000Z-stress", r))
	if len(exps) != 1 {
		t.Fatalf("%d experiments", len(exps))
	}
	e := exps[0]
	if !e.Sweep || e.LoadName != "threads" || strings.Join(e.Points, ",") != "1,2,4,8,10,12" {
		t.Fatalf("sweep %v load %q points %v", e.Sweep, e.LoadName, e.Points)
	}
	if len(e.Variants) != 2 || e.Variants[0].Name != "routing=off" || e.Variants[1].Name != "routing=on" {
		t.Fatalf("variants %+v", e.Variants)
	}
	// Every cell's throughput is its step's successes over its window.
	for _, v := range e.Variants {
		for pi, c := range v.Cells {
			st := c.Steps[0]
			if st.Variant != v.Variant || st.VUs != []int{1, 2, 4, 8, 10, 12}[pi] {
				t.Fatalf("cell %s/%d holds step %+v", v.Name, pi, st)
			}
			if want := float64(st.Ops["query"].Count) / st.Window.Seconds(); math.Abs(c.Throughput-want) > 1e-9 {
				t.Fatalf("throughput %v, want %v", c.Throughput, want)
			}
			if c.Latency.Count != st.Ops["query"].Latency.Count || c.Latency.P99 != st.Ops["query"].Latency.P99 {
				t.Fatalf("latency %+v vs %+v", c.Latency, st.Ops["query"].Latency)
			}
			if len(c.Waits) != 3 || !c.HasDevice {
				t.Fatalf("samplers not read: %+v", c)
			}
		}
	}
	main := e.MainTable()
	if len(main.Groups) != 2 || main.Groups[0].Name != "routing=off" || main.Columns[0] != "threads" {
		t.Fatalf("main table head %+v %v", main.Groups, main.Columns)
	}
	// stress moves bytes but has no mb_per_s counter: the bytes received are their own
	// column, MB/s recv, never the servers' MB/s.
	if !contains(main.Columns, "MB/s recv") || contains(main.Columns, "MB/s") || len(main.Rows) != 6 {
		t.Fatalf("main table %v, %d rows", main.Columns, len(main.Rows))
	}
	c := e.Variants[1].Cells[5]
	wantMB := float64(c.Ops["query"].Bytes) / c.Seconds / 1e6
	if math.Abs(c.MBps-wantMB) > 1e-9 {
		t.Fatalf("MB/s %v, want %v", c.MBps, wantMB)
	}
	// The headline quotes the rule's own ratio of medians at the last load, so the figure
	// agrees with the winner the rule names (a ratio of means could disagree in sign).
	_, _, get := e.metric()
	last := len(e.Points) - 1
	d := differ(e.Variants[0].Name, e.Variants[0].Cells[last], e.Variants[1].Name, e.Variants[1].Cells[last], get)
	want := fmt.Sprintf("routing=on vs routing=off: %s ahead, %.2f×", d.Winner, d.Ratio)
	if h := e.Headline(); d.Outcome != analyze.Different || !strings.HasPrefix(h, want) || strings.Contains(h, "%") {
		t.Fatalf("headline %q, want it to start %q", h, want)
	}
}

func TestTablesFromCountersAndOps(t *testing.T) {
	e := build(t, NewRun("r", tpccStudy().result(t)))[0]
	if e.LoadName != "VUs" || e.Counters[0] != "nopm" || e.Counters[1] != "tpm" {
		t.Fatalf("load %q counters %v", e.LoadName, e.Counters)
	}
	main := e.MainTable()
	if !contains(main.Columns, "NOPM") || !contains(main.Columns, "TPM") || contains(main.Columns, "MB/s") {
		t.Fatalf("columns %v", main.Columns)
	}
	ops := e.OpsTable()
	if len(ops.Rows) != 4*3 {
		t.Fatalf("%d op rows", len(ops.Rows))
	}
	ctr := e.CountersTable()
	hits := 0
	for _, r := range ctr.Rows {
		if r[2].Text == "buffer_hits" {
			hits++
		}
		if r[2].Text == "nopm" || r[2].Text == "tpm" {
			t.Fatalf("headline counter %s repeated in the counters table", r[2].Text)
		}
	}
	if hits != 4 {
		t.Fatalf("buffer_hits in %d rows", hits)
	}
	// Waits are summed over nodes: primary cpu + standby1 cpu.
	c := e.Variants[0].Cells[3]
	if want := c.Counters["pg.primary.wait.cpu"] + c.Counters["pg.standby1.wait.cpu"]; math.Abs(c.Waits["cpu"]-want) > 1e-9 || c.Waits["log"] == 0 {
		t.Fatalf("waits %v, want cpu %v", c.Waits, want)
	}
	names := map[string]bool{}
	for _, tb := range e.Tables() {
		names[tb.Name] = true
	}
	for _, n := range []string{"tpcc-run-main", "tpcc-run-latency", "tpcc-run-counters", "tpcc-run-waits", "tpcc-run-layers"} {
		if !names[n] {
			t.Errorf("no table %s in %v", n, names)
		}
	}
	if _, label, _ := e.metric(); label != "NOPM" {
		t.Fatalf("charted metric %q", label)
	}
}

func TestStepsThatAreNotASweep(t *testing.T) {
	r := &result.Result{Schema: 1, Complete: true, Meta: result.Meta{Command: "seed"}}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, m := range []string{"backup-restore", "direct", "direct-lz4"} {
		r.Steps = append(r.Steps, result.Step{Index: i, Point: i, VUs: 1, Params: map[string]string{"method": m},
			Window: result.Window{Start: t0, End: t0.Add(time.Duration(10*(i+1)) * time.Second)}, Complete: true})
	}
	e := build(t, NewRun("seed", r))[0]
	if e.Sweep || strings.Join(e.Points, "|") != "method=backup-restore|method=direct|method=direct-lz4" {
		t.Fatalf("sweep %v points %q", e.Sweep, e.Points)
	}
	main := e.MainTable()
	if main.Columns[0] != "step" || main.Rows[2][1].Value != 30 {
		t.Fatalf("steps table %v %+v", main.Columns, main.Rows)
	}
	page, err := HTML([]*Experiment{e}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte(`class="chart steps"`)) || bytes.Contains(page, []byte(`class="chart throughput"`)) {
		t.Fatal("a list of steps is drawn as durations, not as a sweep")
	}
}

func TestRepeatsAndCompare(t *testing.T) {
	s := rorStudy()
	s.Repeats = 3
	e := build(t, NewRun("r", s.result(t)))[0]
	c := e.Variants[0].Cells[0]
	if len(c.Steps) != 3 || len(c.Repeats) != 3 {
		t.Fatalf("repeats not merged: %d steps", len(c.Steps))
	}
	var sum int64
	for _, st := range c.Steps {
		sum += st.Ops["query"].Latency.Count
	}
	if c.Latency.Count != sum {
		t.Fatalf("merged latency count %d, want %d", c.Latency.Count, sum)
	}
	pairs, pe, err := Pairs(build(t, NewRun("r", s.result(t))))
	if err != nil || len(pairs) != 1 {
		t.Fatalf("pairs %v %v", pairs, err)
	}
	cmp := Compare(pe, pairs[0][0], pairs[0][1])
	if cmp.Metric != "ops/s" || len(cmp.Diffs) != 6 || cmp.OneRunEach {
		t.Fatalf("comparison %+v", cmp)
	}
	// At one thread both variants are limited by the service time (same throughput, within
	// spread); at 12 the capacities (900 vs 1500 ops/s) differ far beyond the 4% spread.
	if d := cmp.Diffs[0]; d.Verdict != Within {
		t.Errorf("1 thread: %+v", d)
	}
	if d := cmp.Diffs[5]; d.Verdict != Larger || d.Pct < 50 {
		t.Errorf("12 threads: %+v", d)
	}
	for _, d := range cmp.Diffs {
		if d.A.Lo > d.A.Mean || d.A.Hi < d.A.Mean {
			t.Errorf("mean %v outside its range %v..%v", d.A.Mean, d.A.Lo, d.A.Hi)
		}
	}
	var out bytes.Buffer
	if err := WriteText(&out, cmp.Table()); err != nil || !strings.Contains(out.String(), Larger) {
		t.Fatalf("compare table: %v\n%s", err, out.String())
	}
	// Without repeats the spread is the per-second throughput's (analyze.Differ, the rule
	// the run's analysis uses too): at one thread the variants overlap.
	one := build(t, NewRun("r", rorStudy().result(t)))[0]
	cmp = Compare(one, one.Variants[0], one.Variants[1])
	if d := cmp.Diffs[0]; d.Verdict != Within || d.Difference.Spread != "per-second throughput" {
		t.Fatalf("one run each: %+v", d)
	}
	// A side cut to a fraction of a second is too little data, said as such.
	short := rorStudy().result(t)
	for i := range short.Steps {
		short.Steps[i].Window.End = short.Steps[i].Window.Start.Add(100 * time.Millisecond)
	}
	one = build(t, NewRun("r", short))[0]
	cmp = Compare(one, one.Variants[0], one.Variants[1])
	if d := cmp.Diffs[0]; !cmp.OneRunEach || !strings.HasPrefix(d.Verdict, SpreadUnknown+": ") || !strings.Contains(d.Verdict, "s measured") {
		t.Fatalf("short windows: %+v", d)
	}
}

func TestTwoRunsSideBySide(t *testing.T) {
	a, b := rorStudy(), rorStudy()
	b.Seed = 9
	b.Variants = map[string]float64{"routing=off": 1000, "routing=on": 1000}
	exps := build(t, NewRun("results/A", a.result(t)), NewRun("results/B", b.result(t)), NewRun("results/T", tpccStudy().result(t)))
	if len(exps) != 2 || exps[0].Command != "stress" || exps[1].Command != "tpcc run" {
		t.Fatalf("experiments %v", exps)
	}
	e := exps[0]
	if len(e.Variants) != 4 || e.Variants[0].Name != "A: routing=off" || e.Variants[3].Name != "B: routing=on" {
		t.Fatalf("variants %v", names(e.Variants))
	}
	pairs, _, err := Pairs(exps[:1])
	if err != nil || len(pairs) != 2 || pairs[0][0].Run.Label != "A" || pairs[0][1].Run.Label != "B" || pairs[0][0].Variant != pairs[0][1].Variant {
		t.Fatalf("pairs %v %v", pairs, err)
	}
	if _, _, err := Pairs(exps); err == nil || !strings.Contains(err.Error(), "different commands: A (stress, sweeps threads)") ||
		!strings.Contains(err.Error(), "T (tpcc run, sweeps vus)") {
		t.Fatalf("comparing different commands must fail, naming each run: %v", err)
	}
}

func TestAnalysisShapesAndFindings(t *testing.T) {
	one := map[string]any{"load_name": "threads", "unit": "ops/s",
		"knee":      map[string]any{"knee": map[string]any{"load": 8, "throughput": 900, "p99_ms": 12.5}, "saturation": map[string]any{"load": 10}},
		"saturated": map[string]any{"sentence": "the database CPU saturated at 8 threads"},
		"verdicts":  []any{map[string]any{"code": "window-short", "message": "10 s windows"}}}
	for name, raw := range map[string]any{
		"run":    one,
		"keyed":  map[string]any{"routing=off": one, "routing=on": one},
		"listed": []any{withVariant(one, "routing=off"), withVariant(one, "routing=on")},
	} {
		t.Run(name, func(t *testing.T) {
			r := withAnalysis(t, rorStudy().result(t), raw)
			r.Complete, r.IncompleteReason = false, "interrupted"
			r.Steps[3].Warnings = []string{"sampler pg: connection refused"}
			e := build(t, NewRun("x", r))[0]
			fs := e.Findings()
			if fs[0].Kind != "incomplete" || !hasFinding(fs, "saturated", "database CPU saturated") ||
				!hasFinding(fs, "knee", "knee at 8 threads") || !hasFinding(fs, "warning", "window-short") ||
				!hasFinding(fs, "warning", "connection refused") {
				t.Fatalf("findings %+v", fs)
			}
			marks := e.marks(e.Variants[0], 0)
			if name != "run" && (len(marks) != 2 || marks[0].X != 3 || marks[1].X != 4) {
				t.Fatalf("marks %+v", marks)
			}
		})
	}
	// An analysis that does not decode is an error naming it, not a report without judgement.
	var junk Run
	if err := junk.decodeAnalysis([]byte(`"nonsense"`)); err == nil || !strings.HasPrefix(err.Error(), "analysis: ") || junk.Analysis != nil {
		t.Fatalf("decoded %v, error %v", junk.Analysis, err)
	}
}

// A result without an analysis is analysed by internal/analyze when read; one with the
// analysis stored in analyze's own shape is read as it is.
func TestAnalysisFromAnalyze(t *testing.T) {
	s := rorStudy()
	s.Repeats = 3
	r := s.result(t)
	run := NewRun("x", r)
	if !run.AnalysedHere || len(run.Analysis) != 2 || run.Analysis[1].Variant != "routing=on" || run.Analysis[0].LoadName != "threads" {
		t.Fatalf("analysis %+v", run.Analysis)
	}
	// routing=on's capacity is 1500 ops/s against 900: analyze says so at the high loads.
	if len(run.Differences) == 0 {
		t.Fatalf("no differences found: %+v", run)
	}
	an, err := analyze.FromResult(r, analyze.Options{LoadName: "threads", Unit: "ops/s"})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := json.Marshal(an)
	if err != nil {
		t.Fatal(err)
	}
	r.Analysis = stored
	again := NewRun("x", r)
	if again.AnalysedHere || len(again.Analysis) != 2 || len(again.Differences) != len(run.Differences) {
		t.Fatalf("stored analysis not read: %+v", again)
	}
	e := build(t, again)[0]
	if !hasFinding(e.Findings(), "difference", "routing=on") {
		t.Fatalf("findings %+v", e.Findings())
	}
}

func withVariant(m map[string]any, v string) map[string]any {
	out := map[string]any{"variant": v}
	for k, x := range m {
		out[k] = x
	}
	return out
}

func hasFinding(fs []Finding, kind, text string) bool {
	for _, f := range fs {
		if f.Kind == kind && strings.Contains(f.Text, text) {
			return true
		}
	}
	return false
}

func TestCSVAndText(t *testing.T) {
	e := build(t, NewRun("r", rorStudy().result(t)))[0]
	main := e.MainTable()
	b, err := CSV(main)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if recs[0][0] != "threads" || recs[0][1] != "routing=off: time s" || len(recs) != 7 {
		t.Fatalf("csv head %v, %d records", recs[0], len(recs))
	}
	// Numbers are written unformatted (no thousands separators), exactly as computed.
	if recs[6][2] != strconvF(e.Variants[0].Cells[5].Throughput) {
		t.Fatalf("csv throughput %q vs %v", recs[6][2], e.Variants[0].Cells[5].Throughput)
	}
	var out bytes.Buffer
	if err := WriteText(&out, main); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) != 1+1+1+6 || !strings.Contains(lines[1], "routing=off") || !strings.Contains(lines[1], "| routing=on") {
		t.Fatalf("text table:\n%s", out.String())
	}
	// The group separators line up on every row.
	bar := strings.Index(lines[2], " | ")
	for _, l := range lines[2:] {
		if strings.Index(l, " | ") != bar {
			t.Fatalf("misaligned:\n%s", out.String())
		}
	}
	dir := t.TempDir()
	paths, err := WriteCSVs(dir, e.Tables())
	if err != nil || len(paths) != len(e.Tables()) {
		t.Fatalf("%v %v", paths, err)
	}
}

var urlAttr = regexp.MustCompile(`(?i)(src|href|srcset|action|poster|data)\s*=\s*["']?\s*(https?:|//)|url\(\s*["']?\s*(https?:|//)|@import`)

func TestHTMLSelfContained(t *testing.T) {
	s := rorStudy()
	s.Order = []string{"routing=off", `routing=<script>alert(1)</script>`}
	s.Variants = map[string]float64{s.Order[0]: 900, s.Order[1]: 1500}
	r := withAnalysis(t, s.result(t), map[string]any{"routing=off": map[string]any{"knee": map[string]any{"knee": map[string]any{"load": 8}}}})
	r.Meta.Args = []string{"stress", "--primary", "host=db.example.com user=x", "--query", "SELECT 'it''s'"}
	exps := build(t, NewRun("results/x", r), NewRun("results/t", tpccStudy().result(t)))
	page, err := HTML(exps, time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	if !strings.Contains(html, `http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;`) &&
		!strings.Contains(html, `http-equiv="Content-Security-Policy" content="default-src 'none'`) {
		t.Fatal("no CSP meta")
	}
	if strings.Contains(strings.ToLower(html), "<script") {
		t.Fatal("the report has a script element (or an unescaped one)")
	}
	if m := urlAttr.FindString(html); m != "" {
		t.Fatalf("external reference %q", m)
	}
	for class, want := range map[string]int{`class="chart throughput"`: 2, `class="chart latency"`: 2, `class="chart waits"`: 2, `class="chart layer"`: 8,
		`class="chart timeseries lag"`: 2, `class="chart timeseries throughput-time"`: 2, `<table class="data"`: 10} {
		if got := strings.Count(html, class); got != want {
			t.Errorf("%s: %d, want %d", class, got, want)
		}
	}
	if !strings.Contains(html, `agbench stress --primary &#39;host=db.example.com user=x&#39; --query &#39;SELECT &#39;\&#39;&#39;it&#39;\&#39;&#39;&#39;&#39;s&#39;\&#39;&#39;&#39;`) &&
		!strings.Contains(html, "agbench stress --primary") {
		t.Fatal("command line missing")
	}
	if !strings.Contains(html, ">knee (routing=off)<") {
		t.Fatal("knee not marked")
	}
}

func TestNiceTicks(t *testing.T) {
	for _, c := range []struct {
		max  float64
		want string
	}{{0, "0 1"}, {1, "0 0.2 0.4 0.6 0.8 1"}, {7, "0 2 4 6 8"}, {1450, "0 500 1000 1500"}, {0.013, "0 0.005 0.01 0.015"}, {0.011, "0 0.0025 0.005 0.0075 0.01 0.0125"}} {
		var got []string
		for _, v := range niceTicks(c.max) {
			got = append(got, trimZero(strconvF(math.Round(v*1e6)/1e6)))
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("niceTicks(%v) = %v, want %s", c.max, got, c.want)
		}
	}
	if fmtNum(1200000) != "1,200,000" || fmtNum(0.5) != "0.500" || fmtNum(12.345) != "12.35" || fmtNum(math.NaN()) != "-" {
		t.Fatal(fmtNum(1200000), fmtNum(0.5), fmtNum(12.345))
	}
}

func strconvF(v float64) string { return strconvFormat(v) }

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

func names(vs []*Variant) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Name)
	}
	return out
}

func TestMergeDifferences(t *testing.T) {
	got := mergeDifferences([]string{
		"throughput at 1 threads: routing=off ahead, 1.68× (medians; 10th–90th percentile ranges apart)",
		"throughput at 8 threads: routing=on ahead, 1.20× (medians; 10th–90th percentile ranges apart)",
		"throughput at 12 threads: routing=off ahead, 2.04× (medians; 10th–90th percentile ranges apart)",
		"something else",
	})
	want := []string{"something else",
		"throughput: routing=off ahead at 1, 12 threads (1.68–2.04×; medians; 10th–90th percentile ranges apart)",
		"throughput: routing=on ahead at 8 threads (1.20×; medians; 10th–90th percentile ranges apart)"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s", strings.Join(got, "\n"))
	}
}

func TestGroupWarnings(t *testing.T) {
	main, groups := GroupWarnings([]Finding{
		{Kind: "knee", Text: "knee at 4"},
		{Kind: "warning", Text: "window-short: 5 s"},
		{Kind: "warning", Text: "step 2 (1 VUs, routing=on): TPM: client 1, server 2"},
		{Kind: "warning", Text: "A: step 3 (2 VUs): TPM: client 3, server 4"},
		{Kind: "warning", Text: "threads 1, QD 4: short run: 3 s"},
		{Kind: "warning", Text: "threads 2, QD 4: short run: 3 s"},
	})
	if len(main) != 1 || len(groups) != 3 || groups[1].Key != "TPM" || len(groups[1].Texts) != 2 || groups[2].Key != "short run" || len(groups[2].Texts) != 2 {
		t.Fatalf("%+v %+v", main, groups)
	}
}

// A time series sampled once per step is drawn as dots (a path of single points shows nothing).
func TestIsolatedPointsAreDots(t *testing.T) {
	c := lineChart{Numeric: true, Lines: []line{{Name: "lag", Colour: "#000", X: []float64{0, 0, 5, 5, 9, 10}, Y: []float64{1, math.NaN(), 2, math.NaN(), 3, 4}}}}
	svg := string(c.SVG())
	if n := strings.Count(svg, `<circle class="pt"`); n != 2 {
		t.Fatalf("%d dots, want 2 (the two isolated points):\n%s", n, svg)
	}
}

// A part of a result the report reads that does not decode (a section of Extra, the stored
// analysis, a step's analysis) makes Build fail naming the run and the part, instead of a
// report with that table or judgement missing.
func TestUnreadablePartsAreNamed(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	seedRun := func() *result.Result {
		r := &result.Result{Schema: 1, Complete: true, Meta: result.Meta{Command: "seed"}}
		for i := range 3 {
			st := result.Step{Index: i, Point: i, VUs: 1, Params: map[string]string{"n": fmt.Sprint(i)},
				Window: result.Window{Start: t0, End: t0.Add(10 * time.Second)}, Complete: true}
			if err := st.SetExtra(result.ExtraSeed, result.Seeding{Method: "direct", TotalSeconds: 10,
				Phases: []result.SeedPhase{{Name: "transfer", Seconds: 8}}}); err != nil {
				t.Fatal(err)
			}
			r.Steps = append(r.Steps, st)
		}
		return r
	}
	if e := build(t, NewRun("results/seed", seedRun()))[0]; len(e.SeedTable().Rows) == 0 {
		t.Fatal("no seeding table from good sections")
	}
	for _, c := range []struct {
		name  string
		spoil func(*result.Result)
		want  string
	}{
		{"seed", func(r *result.Result) {
			r.Steps[1].Extra[result.ExtraSeed] = json.RawMessage(`{"phases": {"name": "transfer"}}`)
		},
			`results/seed: step 1 extra "seed": json: cannot unmarshal object`},
		{"readahead", func(r *result.Result) {
			r.Extra = map[string]json.RawMessage{result.ExtraReadahead: json.RawMessage(`{"table": [{"off": 3}]}`)}
		}, `results/seed: extra "readahead": json: cannot unmarshal number`},
		{"analysis", func(r *result.Result) {
			r.Analysis = json.RawMessage(`{"variants": [{"analysis": {"verdicts": "none"}}]}`)
		},
			`results/seed: analysis: json: cannot unmarshal string`},
		{"step analysis", func(r *result.Result) { r.Steps[2].Analysis = json.RawMessage(`{"verdicts": [1]}`) },
			`results/seed: step 2 analysis: json: cannot unmarshal number`},
		{"stale reads", func(r *result.Result) {
			r.Steps[2].Extra[result.ExtraStale] = json.RawMessage(`{"nodes": {"standby1": {"reads": "many"}}}`)
		}, `results/seed: step 2 extra "stale_reads": json: cannot unmarshal string`},
		{"sample, for the analysis made here", func(r *result.Result) {
			r.Steps[0].Extra[result.ExtraSample] = json.RawMessage(`{"nodes": []}`)
		}, `results/seed: step 0 extra "sample": json: cannot unmarshal array`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := seedRun()
			c.spoil(r)
			if exps, err := Build([]*Run{NewRun("results/seed", r)}); err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("Build: %d experiments, %v\nwant %s...", len(exps), err, c.want)
			}
		})
	}
}

// A run on modelled hosts charts each node's control group over time, one chart per unit
// (IO against the budget among them).
func TestModelledHostSeriesAreCharted(t *testing.T) {
	r := &result.Result{Schema: 1, Complete: true, Meta: result.Meta{Command: "stress"}}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 2 {
		at := t0.Add(time.Duration(10*i) * time.Second)
		st := result.Step{Index: i, Point: i, VUs: 1 + i, Window: result.Window{Start: at, End: at.Add(10 * time.Second)}, Complete: true,
			Series: map[string]result.TimeSeries{
				result.HostName("standby1", result.HostReadBPS):  {Unit: "B/s", Start: at, T: []float64{1, 2}, V: []float64{4e7, 4.1e7}},
				result.HostName("standby1", result.HostCPUCores): {Unit: "cores", Start: at, T: []float64{1, 2}, V: []float64{0.3, 0.6}},
			}}
		r.Steps = append(r.Steps, st)
	}
	page, err := HTML(build(t, NewRun("hosts", r)), t0)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(page, []byte(`class="chart timeseries host"`)); n != 2 || !bytes.Contains(page, []byte("modelled hosts over time")) {
		t.Fatalf("%d host charts", n)
	}
}
