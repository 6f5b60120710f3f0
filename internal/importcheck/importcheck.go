// Package importcheck owns the layering tests' one check: that a package's own (non-test)
// files import nothing from the folders its doc comment rules out. Tests only import it.
package importcheck

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// Forbid fails t for every import of a Go file in dir (test files aside) whose path contains
// one of the forbidden fragments, such as "/internal/runner".
func Forbid(t testing.TB, dir string, forbidden ...string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s (%v)", dir, err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			for _, bad := range forbidden {
				if strings.Contains(imp.Path.Value, bad) {
					t.Errorf("%s imports %s", f, imp.Path.Value)
				}
			}
		}
	}
}
