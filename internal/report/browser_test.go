package report

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/report/reporttest"
)

// chartSelectors are the elements a report of the ROR and TPC-C fixtures must draw.
var chartSelectors = []string{"svg.chart", "svg.chart.throughput path.line", "svg.chart.latency path.line",
	"svg.chart.waits rect.bar", "svg.chart.lag path.line", "svg .mark", "table.data", ".summary .card", "pre.cmdline"}

// TestReportInBrowser renders a report in headless Chromium: every chart draws, nothing is
// fetched, no error or CSP violation is logged, and a screenshot is saved.
func TestReportInBrowser(t *testing.T) {
	chromium := reporttest.Require(t)
	s := rorStudy()
	s.Repeats = 2
	ror := withAnalysis(t, s.result(t), map[string]any{
		"routing=off": map[string]any{"load_name": "threads", "unit": "ops/s",
			"knee":      map[string]any{"knee": map[string]any{"load": 4, "throughput": 880, "p99_ms": 9}, "saturation": map[string]any{"load": 8}},
			"saturated": map[string]any{"sentence": "the primary's CPU saturated from 4 threads (cpu 60% of sessions)"}, "verdicts": []any{}},
		"routing=on": map[string]any{"load_name": "threads", "unit": "ops/s",
			"knee":      map[string]any{"knee": map[string]any{"load": 8}, "saturation": map[string]any{"load": 8}},
			"saturated": map[string]any{"sentence": "reads spread over two servers: the standby's CPU saturated at 8 threads"},
			"verdicts":  []any{map[string]any{"code": "window-short", "message": "10 s windows measure warm-up; run 60 s or more"}}},
	})
	exps := build(t, NewRun("results/20261122T000000Z-stress", ror), NewRun("results/20261122T001000Z-tpcc-run", tpccStudy().result(t)))
	page, err := HTML(exps, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got, err := reporttest.Render(ctx, chromium, file, chartSelectors)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Requests) > 0 {
		t.Errorf("the report made network requests: %v", got.Requests)
	}
	if len(got.Problems) > 0 {
		t.Errorf("the browser reported problems: %v", got.Problems)
	}
	charts := strings.Count(string(page), `<svg class="chart`)
	if got.Counts["svg.chart"] != charts || got.Drawn != charts {
		t.Errorf("%d charts in the file, %d in the DOM, %d drawn", charts, got.Counts["svg.chart"], got.Drawn)
	}
	for _, sel := range chartSelectors {
		if got.Counts[sel] == 0 {
			t.Errorf("no %s drew", sel)
		}
	}
	if got.Counts["svg.chart.throughput path.line"] != 2+1 {
		t.Errorf("throughput lines: %d, want one per variant (2 + 1)", got.Counts["svg.chart.throughput path.line"])
	}
	saveScreenshot(t, "report-screenshot.png", got.Screenshot)
}

// TestBrowserCheckCatchesRequests shows the browser check fails a page that fetches: with
// the CSP the fetch is refused and the violation reported; without it the request is seen.
func TestBrowserCheckCatchesRequests(t *testing.T) {
	chromium := reporttest.Require(t)
	dir := t.TempDir()
	img := `<img src="http://127.0.0.1:9/x.png">`
	withCSP := filepath.Join(dir, "csp.html")
	bare := filepath.Join(dir, "bare.html")
	_ = os.WriteFile(withCSP, []byte(`<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="`+CSP+`"></head><body>`+img+`</body></html>`), 0o644)
	_ = os.WriteFile(bare, []byte(`<!DOCTYPE html><html><body>`+img+`</body></html>`), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got, err := reporttest.Render(ctx, chromium, withCSP, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Chromium announces the request, then blocks it and logs the violation.
	if !strings.Contains(strings.Join(got.Problems, "\n"), "Content Security Policy") {
		t.Errorf("with CSP: requests %v, problems %v", got.Requests, got.Problems)
	}
	got, err = reporttest.Render(ctx, chromium, bare, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Requests) != 1 || got.Requests[0] != "http://127.0.0.1:9/x.png" {
		t.Errorf("without CSP: requests %v", got.Requests)
	}
}

// saveScreenshot keeps the screenshot in $AGBENCH_ARTIFACTS (or the test's temp folder).
func saveScreenshot(t *testing.T, name string, png []byte) {
	t.Helper()
	dir := os.Getenv("AGBENCH_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", p, len(png))
}
