package report

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/result"
)

func TestResultPathsAndLoadRuns(t *testing.T) {
	dir := t.TempDir()
	write := func(sub string) string {
		p, err := result.Write(filepath.Join(dir, sub), &result.Result{Meta: result.Meta{Command: "stress"}})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	study := filepath.Join(dir, "study")
	second, first := write("study/20261122T010300Z-stress"), write("study/20261122T010200Z-stress")
	one := write("one")
	if err := os.MkdirAll(filepath.Join(dir, "empty", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		arg  string
		want []string
		err  string // the bad input's message; "" for none
	}{
		{arg: one, want: []string{one}},
		{arg: filepath.Dir(one), want: []string{one}},
		{arg: study, want: []string{first, second}}, // by name: the order the runs ran in
		{arg: filepath.Join(dir, "empty"), err: filepath.Join(dir, "empty") + ": no result.json in this folder or below it"},
		{arg: filepath.Join(dir, "gone"), err: filepath.Join(dir, "gone") + ": no such result file or folder"},
	} {
		got, err := ResultPaths(c.arg)
		if c.err != "" {
			if !agerr.IsBadInput(err) || err.Error() != c.err {
				t.Errorf("ResultPaths(%s): %v; want bad input %q", c.arg, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ResultPaths(%s) = %v, %v; want %v", c.arg, got, err, c.want)
		}
	}
	runs, err := LoadRuns([]string{study, one})
	if err != nil || len(runs) != 3 || runs[0].Path != filepath.Dir(first) || runs[2].Path != filepath.Dir(one) {
		t.Fatalf("LoadRuns: %d runs, %v", len(runs), err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Every unreadable argument is named at once, and nothing readable is lost.
	runs, err = LoadRuns([]string{filepath.Join(dir, "gone"), bad, one})
	if !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "gone") || !strings.Contains(err.Error(), "bad.json") || len(runs) != 1 {
		t.Fatalf("LoadRuns with bad arguments: %d runs, %v", len(runs), err)
	}
}

// compare labels two runs A and B, keeps one run's own label, and names every unreadable
// argument at once.
func TestLoadCompared(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, sub := range []string{"20261122T010200Z-stress", "20261122T010300Z-stress"} {
		p, err := result.Write(filepath.Join(dir, sub), &result.Result{Meta: result.Meta{Command: "stress"}})
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, filepath.Dir(p))
	}
	runs, err := LoadCompared(paths)
	if err != nil || len(runs) != 2 || runs[0].Label != "A" || runs[1].Label != "B" {
		t.Fatalf("two runs: %v", err)
	}
	runs, err = LoadCompared(paths[:1])
	if err != nil || len(runs) != 1 || runs[0].Label != "20261122T010200Z-stress" {
		t.Fatalf("one run: %+v, %v", runs, err)
	}
	_, err = LoadCompared([]string{filepath.Join(dir, "gone"), filepath.Join(dir, "gone2")})
	if !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "gone2: no such result file") || !strings.Contains(err.Error(), "gone: no such result file") {
		t.Fatalf("unreadable: %v", err)
	}
}
