package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Write prints the tables, writes the page and every table as CSV, and ends with the
// page's absolute path; without Tables it prints only what it wrote.
func TestWrite(t *testing.T) {
	t.Parallel()
	exps := build(t, NewRun("r", rorStudy().result(t)))
	dir := t.TempDir()
	page, csvDir := filepath.Join(dir, "r.html"), filepath.Join(dir, "csv", "tables")
	var out bytes.Buffer
	if err := Write(&out, exps, Output{HTML: page, CSV: csvDir, Tables: true}, time.Now()); err != nil {
		t.Fatal(err)
	}
	var tables bytes.Buffer
	if err := WriteTables(&tables, exps); err != nil {
		t.Fatal(err)
	}
	n := len(exps[0].Tables())
	want := tables.String() + "wrote " + strconv.Itoa(n) + " CSV tables to " + csvDir + "\nreport: " + page + "\n"
	if out.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
	}
	if b, err := os.ReadFile(page); err != nil || !bytes.HasPrefix(b, []byte("<!DOCTYPE html>")) {
		t.Errorf("page: %.40q %v", b, err)
	}
	if csvs, _ := filepath.Glob(filepath.Join(csvDir, "*.csv")); len(csvs) != n {
		t.Errorf("%d CSV files, want %d", len(csvs), n)
	}
	out.Reset()
	if err := Write(&out, exps, Output{HTML: page}, time.Now()); err != nil || out.String() != "report: "+page+"\n" {
		t.Errorf("without tables: %q %v", out.String(), err)
	}
}

// A page that cannot be written is an error naming it, and nothing is left behind.
func TestWriteFails(t *testing.T) {
	t.Parallel()
	exps := build(t, NewRun("r", rorStudy().result(t)))
	page := filepath.Join(t.TempDir(), "none", "r.html")
	var out bytes.Buffer
	err := Write(&out, exps, Output{HTML: page}, time.Now())
	if err == nil || !strings.HasPrefix(err.Error(), "write "+page+": ") || out.Len() != 0 {
		t.Errorf("%v, printed %q", err, out.String())
	}
	if _, err := os.Stat(filepath.Dir(page)); !os.IsNotExist(err) {
		t.Errorf("made %s", filepath.Dir(page))
	}
}
