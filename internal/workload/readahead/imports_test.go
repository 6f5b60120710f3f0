package readahead

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// The workload reaches the server through Server: it must not import the cluster, the
// runner or the report.
func TestImportsKeepTheLayering(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	forbidden := []string{"/internal/cluster", "/internal/runner", "/internal/report", "/internal/listener"}
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
