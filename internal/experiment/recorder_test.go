package experiment

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/result"
)

// Runs started in the same second each get their own folder and keep their own result.
func TestRecordersOfOneSecondNeverShareAFolder(t *testing.T) {
	base := t.TempDir()
	var paths []string
	for i := 0; i < 3; i++ {
		r, err := NewRecorder(base, "stress", "test", []string{"stress", "--threads", "1"})
		if err != nil {
			t.Fatal(err)
		}
		r.Result.Meta.Started = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC) // same second for all three
		r.AddStep(result.Step{Index: 0, VUs: i + 1, Complete: true})
		p, err := r.Finish()
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	seen := map[string]bool{}
	for i, p := range paths {
		if seen[p] {
			t.Fatalf("two runs wrote %s", p)
		}
		seen[p] = true
		res, err := result.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Steps) != 1 || res.Steps[0].VUs != i+1 || !res.Complete {
			t.Errorf("%s: %+v", p, res.Steps)
		}
	}
}

// The folder name is <time>-<command>, then -2, -3 ... when it exists.
func TestRecorderFolderSuffix(t *testing.T) {
	base := t.TempDir()
	a, err := NewRecorder(base, "tpcc run", "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := result.RunDir(base, a.Result.Meta.Started, "tpcc run")
	if a.Dir() != want {
		t.Fatalf("dir %s, want %s", a.Dir(), want)
	}
	// A second run of the same second finds the folder taken.
	if err := os.MkdirAll(want+"-2", 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := NewRecorder(base, "tpcc run", "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.Result.Meta.Started.Truncate(time.Second).Equal(a.Result.Meta.Started.Truncate(time.Second)) && b.Dir() != want+"-3" {
		t.Errorf("second dir %s, want %s-3", b.Dir(), want)
	}
	if !strings.HasSuffix(filepath.Base(b.Dir()), "-tpcc-run") && !strings.Contains(filepath.Base(b.Dir()), "-tpcc-run-") {
		t.Errorf("dir %s", b.Dir())
	}
}

// A run that failed before measuring anything leaves no folder; a run cut short after a step
// keeps its result, marked incomplete with the reason.
func TestRecorderIncomplete(t *testing.T) {
	base := t.TempDir()
	r, err := NewRecorder(base, "scan", "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.End(errors.New("target unreachable"))
	if p, err := r.Finish(); p != "" || err == nil || err.Error() != "target unreachable" {
		t.Fatalf("path %q err %v", p, err)
	}
	if _, err := os.Stat(r.Dir()); !os.IsNotExist(err) {
		t.Errorf("folder of a run that measured nothing is left: %v", err)
	}

	r, err = NewRecorder(base, "scan", "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.AddStep(result.Step{Index: 0, VUs: 1})
	r.End(errors.New("interrupted"))
	p, err := r.Finish()
	if err == nil || p == "" {
		t.Fatalf("path %q err %v", p, err)
	}
	res, err := result.Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete || res.IncompleteReason != "interrupted" || len(res.Steps) != 1 || res.Meta.Ended.IsZero() {
		t.Errorf("result %+v", res)
	}
}

// A write that fails is never dropped: Finish returns it.
func TestRecorderWriteErrorsAreReported(t *testing.T) {
	base := t.TempDir()
	r, err := NewRecorder(base, "disk", "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	// A folder where the result file should go makes every write fail.
	if err := os.Mkdir(r.Path(), 0o755); err != nil {
		t.Fatal(err)
	}
	r.AddStep(result.Step{Index: 0})
	p, err := r.Finish()
	if err == nil || p != "" || !strings.Contains(err.Error(), "write result") {
		t.Fatalf("path %q err %v", p, err)
	}
}

func TestIsLocal(t *testing.T) {
	for conn, want := range map[string]bool{
		"host=127.0.0.1 port=5432": true, "host=/var/run/postgresql": true, "postgres://u@localhost:5/db": true,
		"host=10.1.2.3": false, "postgres://db.example.com/x": false, "port=notanumber": false,
	} {
		if got := IsLocal(conn); got != want {
			t.Errorf("IsLocal(%q) = %v", conn, got)
		}
	}
}

func TestParseRoutingCompare(t *testing.T) {
	ax, err := ParseRoutingCompare("routing=off,on")
	if err != nil || ax.Name != RoutingKey || len(ax.Values) != 2 {
		t.Fatal(ax, err)
	}
	for _, bad := range []string{"colour=red,blue", "routing=off,maybe", "routing"} {
		if _, err := ParseRoutingCompare(bad); !agerr.IsBadInput(err) {
			t.Errorf("%q: %v, want bad input", bad, err)
		}
	}
}

// A step that did not complete fails the run, naming the step and why.
func TestFailedSteps(t *testing.T) {
	ok := result.Step{Index: 0, Complete: true, Params: map[string]string{"threads": "1"}}
	if err := FailedSteps([]result.Step{ok}); err != nil {
		t.Fatal(err)
	}
	bad := result.Step{Index: 1, Params: map[string]string{"threads": "2", "routing": "on"}, IncompleteReason: "no successful operation in the window (12 failed)"}
	err := FailedSteps([]result.Step{ok, bad})
	if err == nil || agerr.ExitCode(err) != agerr.ExitFailure ||
		err.Error() != "step 2 (routing=on threads=2): no successful operation in the window (12 failed)" {
		t.Fatalf("FailedSteps: %v", err)
	}
}

// A write that fails after an earlier one succeeded keeps the earlier file, and Finish names
// it beside the error.
func TestRecorderKeepsTheEarlierWrite(t *testing.T) {
	r, err := NewRecorder(t.TempDir(), "stress", "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.AddStep(result.Step{Index: 0})
	if err := os.Remove(r.Path()); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(r.Path(), 0o755); err != nil { // every later write fails
		t.Fatal(err)
	}
	r.AddStep(result.Step{Index: 1})
	p, err := r.Finish()
	if err == nil || p != r.Path() {
		t.Fatalf("path %q err %v", p, err)
	}
}
