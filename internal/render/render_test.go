package render

import (
	"bytes"
	"compress/gzip"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/agbench/agbench/internal/result"
)

var update = flag.Bool("update", false, "rewrite testdata/*.txt from the recorded results")

// recordedDir holds the results the command layer's golden test renders: real result.json
// files made by agbench on a local cluster, with what each command printed
// (../../cmd/agbench/testdata/golden/<name>.command.txt).
const recordedDir = "../../cmd/agbench/testdata"

// recorded reads testdata/recorded/<name>.json.gz of the command layer's golden test.
func recorded(t *testing.T, name string) *result.Result {
	t.Helper()
	f, err := os.Open(filepath.Join(recordedDir, "recorded", name+".json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	r, err := result.Decode(b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// commandGolden is what the command that made a recorded result printed on stdout after
// its run, as the command layer's golden test keeps it.
func commandGolden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(recordedDir, "golden", name+".command.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkGolden compares a rendering with testdata/<name>.txt (rewritten with -update).
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".txt")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, []byte(got)) {
		t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}
