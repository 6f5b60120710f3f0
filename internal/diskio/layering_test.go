package diskio

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// The package doc's promise: diskio does not reach up into the command layer, the cluster,
// the runner, the workloads or the report.
func TestImportsKeepTheLayering(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	forbidden := []string{"/cmd/", "/internal/cluster", "/internal/runner", "/internal/workload", "/internal/report"}
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
