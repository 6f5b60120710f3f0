package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A drill's result.json from before agbench measured the new primary's synchronous standbys
// (no sync_gap, no no_sync_* figures, no synchronous_mode_strict under Patroni) still loads:
// agbench report (text, HTML, CSV) and compare show the new figures as absent, "–", never
// 0, and do not panic. So does one written before the count of measured cycles
// (no_sync_measured_cycles): its longest time is given without a count it cannot know.
func TestOlderDrillResultsStillReport(t *testing.T) {
	older, err := os.ReadFile(filepath.Join("testdata", "older", "drill-before-sync-gap.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(older, &doc); err != nil {
		t.Fatal(err)
	}
	drill := doc["extra"].(map[string]any)["drill"].(map[string]any)
	drill["no_sync_cycles"], drill["no_sync_max_seconds"] = 1, 4.2
	step := doc["steps"].([]any)[0].(map[string]any)["extra"].(map[string]any)["drill"].(map[string]any)
	step["sync_gap"] = map[string]any{"node": "standby1", "samples": 30, "no_sync_seconds": 4.2, "no_sync_from_seconds": 1.1, "no_sync_to_seconds": 5.3}
	newer, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	results := t.TempDir()
	dirs := map[string][]byte{"20261126T082348Z-drill": older, "20261126T090000Z-drill": newer}
	for dir, b := range dirs {
		if err := os.MkdirAll(filepath.Join(results, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(results, dir, "result.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	html, csv := filepath.Join(t.TempDir(), "r.html"), t.TempDir()
	code, out, errs := runCLI(t, nil, "report", filepath.Join(results, "20261126T082348Z-drill"), "-o", html, "--csv", csv)
	if code != 0 {
		t.Fatalf("report of an older result: exit %d\n%s\n%s", code, out, errs)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(page), "no synchronous standby for") || strings.Contains(string(page), "commits acknowledged with no synchronous standby") {
		t.Errorf("an older result shows a time without a synchronous standby it never measured")
	}
	if !strings.Contains(string(page), "no sync standby s") {
		t.Errorf("the cycles' table lacks the column (shown absent)")
	}
	code, out, errs = runCLI(t, nil, "report", filepath.Join(results, "20261126T090000Z-drill"), "-o", html)
	if code != 0 {
		t.Fatalf("report of a result without the measured count: exit %d\n%s\n%s", code, out, errs)
	}
	if page, _ = os.ReadFile(html); !strings.Contains(string(page), "4.20 s") || !strings.Contains(string(page), "cycles with one: 1") {
		t.Errorf("the longest time without a synchronous standby is not shown without its count")
	}
	code, out, errs = runCLI(t, nil, "compare", filepath.Join(results, "20261126T082348Z-drill"), filepath.Join(results, "20261126T090000Z-drill"))
	if code != 0 {
		t.Fatalf("compare of older results: exit %d\n%s\n%s", code, out, errs)
	}
}

// A run of terminals written before a step said its terminals (its pool of 3 sessions as
// the "vus" param and the step's VUs, the terminals only in its tpcc_terminals section)
// still loads, and agbench report says its load as terminals over the pool's sessions, not
// as VUs, in its tables and its warnings; so does compare of it beside itself.
func TestOlderTerminalsResultSaysTerminals(t *testing.T) {
	older, err := os.ReadFile(filepath.Join("testdata", "older", "tpcc-terminals-as-vus.json"))
	if err != nil {
		t.Fatal(err)
	}
	results := t.TempDir()
	for _, dir := range []string{"20261128T143925Z-tpcc-run", "20261128T150000Z-tpcc-run"} {
		if err := os.MkdirAll(filepath.Join(results, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(results, dir, "result.json"), older, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, b := filepath.Join(results, "20261128T143925Z-tpcc-run"), filepath.Join(results, "20261128T150000Z-tpcc-run")
	html := filepath.Join(t.TempDir(), "r.html")
	code, out, errs := runCLI(t, nil, "report", a, "-o", html)
	if code != 0 {
		t.Fatalf("report of an older result: exit %d\n%s\n%s", code, out, errs)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{out, string(page)} {
		if !strings.Contains(text, "30 terminals over 3 sessions") || strings.Contains(text, "vus=3") || strings.Contains(text, "(3 VUs)") {
			t.Errorf("the older run of terminals is not said as terminals over sessions:\n%s", text)
		}
	}
	if code, out, errs := runCLI(t, nil, "compare", a, b); code != 0 || !strings.Contains(out, "30 terminals over 3 sessions") {
		t.Errorf("compare of older results: exit %d\n%s\n%s", code, out, errs)
	}
}
