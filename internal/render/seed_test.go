package render

import (
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// Each recorded seeding, rebuilt from its step's section, is what `agbench seed` printed
// before the result's path; with --compare, the article's table over the variants the run
// recorded in its configuration.
func TestSeedingOfRecordedRuns(t *testing.T) {
	r := recorded(t, "seed")
	var b strings.Builder
	for i := range r.Steps {
		s, err := r.Steps[i].Seeding()
		if err != nil || s == nil {
			t.Fatalf("step %d: seeding %v, %v", i, s, err)
		}
		Seeding(&b, s)
	}
	if !strings.HasPrefix(commandGolden(t, "seed"), b.String()+"\nresult: ") {
		t.Errorf("the seeding is not how the command's output begins:\n%s", b.String())
	}

	r = recorded(t, "seed-compare")
	var variants []string
	for _, v := range r.Meta.Config["variants"].([]any) {
		variants = append(variants, v.(string))
	}
	b.Reset()
	SeedCompare(&b, r, variants)
	if !strings.HasPrefix(commandGolden(t, "seed-compare"), b.String()+"\nresult: ") {
		t.Errorf("the comparison is not how the command's output begins:\n%s", b.String())
	}
	for _, want := range []string{"direct/lz4", "backup-restore/none", "compression ratio", "database files streamed per seeding"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
}

// The history shows a running seeding's missing end as a dash and keeps a long, multi-line
// failure reason to one cell of 60 characters.
func TestSeedHistory(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	recs := []result.SeedRecord{
		{ID: 1, Standby: "n2", Method: "direct", Compression: "lz4", Start: start, End: start.Add(90 * time.Second),
			State: "completed", Attempts: 1, SizeBytes: 64 << 20, WireBytes: 16 << 20, Seconds: 90, MBps: 0.75},
		{ID: 2, Standby: "n3", Method: "backup-restore", Compression: "none", Start: start, State: "failed", Attempts: 3,
			Reason: "pg_basebackup: error:\nconnection to server lost while streaming the data folder"},
	}
	var b strings.Builder
	SeedHistory(&b, recs)
	want := "id  standby  method          compress  start (UTC)          end       seconds  size  wire  MB/s  state      attempts  failure reason\n" +
		"1   n2       direct          lz4       2026-01-02 03:04:05  03:05:35  90.0     64M   16M   0.8   completed  1         \n" +
		"2   n3       backup-restore  none      2026-01-02 03:04:05  -         0.0      0B    0B    0.0   failed     3         pg_basebackup: error: connection to server lost while str...\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
