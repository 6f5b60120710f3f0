package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/seed"
	"github.com/agbench/agbench/internal/workload/readahead"
)

// The report shows a seeding's and a readahead run's own tables (HTML and --csv), from
// results made by the code that writes them (seed.Report.Step, readahead's Step and RunExtra).
func TestReportSeedAndReadaheadTables(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)

	sr := result.New("seed", version, []string{"seed", "--compare", "compress=none,lz4"})
	for i, v := range []struct {
		label    string
		transfer float64
		ratio    float64
	}{{"direct/none", 10, 1}, {"direct/lz4", 6, 2.5}, {"direct/none", 12, 1}, {"direct/lz4", 8, 2.5}} {
		rep := seed.Report{Seeding: result.Seeding{Method: "direct", Started: t0, Ended: t0.Add(20 * time.Second),
			Phases:       []seed.PhaseUse{{Name: seed.PhaseCheckpoint, Seconds: 1}, {Name: seed.PhaseTransfer, Seconds: v.transfer}, {Name: seed.PhaseCatchUp, Seconds: 2}},
			TotalSeconds: 3 + v.transfer, StreamedBytes: 400e6, WireBytes: int64(400e6 / v.ratio), CompressionRatio: v.ratio, MBps: 400 / v.transfer,
			SenderCPUSeconds: 2, ReceiverCPUSeconds: 3}}
		sr.Steps = append(sr.Steps, rep.Step(i, 0, i/2, v.label, nil))
	}
	sr.Finish(nil)
	if _, err := result.Write(filepath.Join(dir, "seed"), sr); err != nil {
		t.Fatal(err)
	}

	rr := result.New("readahead", version, []string{"readahead"})
	q := readahead.Query{Name: "full", Title: "full scan", Node: "Seq Scan"}
	var ms []readahead.Measurement
	for i, on := range []bool{false, true} {
		m := readahead.Measurement{Query: q.Name, Prefetch: on, Cold: true, Start: t0, ElapsedMs: 900 - 600*float64(i), NodeOK: true,
			Plan: readahead.PlanStats{SharedHit: 5, SharedRead: 8000, IOReadMs: 700 - 500*float64(i)}, IOOps: int64(8000 / (1 + 15*i)), IOBytes: 8000 * 8192}
		st, err := m.Step(i, 0)
		if err != nil {
			t.Fatal(err)
		}
		rr.Steps, ms = append(rr.Steps, st), append(ms, m)
	}
	extra, _ := json.Marshal(readahead.RunExtra{Table: readahead.Summarize([]readahead.Query{q}, ms)})
	rr.Extra = map[string]json.RawMessage{readahead.ExtraKey: extra}
	rr.Finish(nil)
	if _, err := result.Write(filepath.Join(dir, "readahead"), rr); err != nil {
		t.Fatal(err)
	}

	html, csvDir := filepath.Join(dir, "report.html"), filepath.Join(dir, "csv")
	code, out, errs := runCLI(t, nil, "report", filepath.Join(dir, "seed"), filepath.Join(dir, "readahead"), "-o", html, "--csv", csvDir, "-q")
	if code != 0 {
		t.Fatalf("code %d: %s\n%s", code, errs, out)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"seeding steps per variant", "catch-up", "compression ratio", "wire MB", "STATISTICS IO", "prefetch off", "avg IO KB", "Seq Scan"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	readCSV := func(name string) [][]string {
		f, err := os.Open(filepath.Join(csvDir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		recs, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	rows := map[string][]string{}
	for _, r := range readCSV("seed-seed.csv") {
		rows[r[0]] = r
	}
	// Medians of two repeats: transfer 11 s without compression, 7 s with lz4.
	if h := rows["step"]; len(h) != 3 || h[1] != "direct/none" || h[2] != "direct/lz4" {
		t.Errorf("seed header %v", h)
	}
	if r := rows["transfer"]; len(r) != 3 || r[1] != "11" || r[2] != "7" {
		t.Errorf("transfer row %v", r)
	}
	if r := rows["compression ratio"]; len(r) != 3 || r[2] != "2.5" || rows["wire MB"][2] != "160" {
		t.Errorf("compression %v, wire %v", r, rows["wire MB"])
	}
	ra := readCSV("readahead-statistics-io.csv")
	if len(ra) != 2 || ra[0][1] != "prefetch off: hits" || ra[0][7] != "prefetch on: hits" || ra[0][13] != "ratio off/on" {
		t.Fatalf("readahead csv %v", ra)
	}
	if r := ra[1]; r[0] != "full scan" || r[2] != "8000" || r[9] != "500" || r[13] != "3" || r[14] != "Seq Scan" {
		t.Errorf("readahead row %v", r)
	}
}
