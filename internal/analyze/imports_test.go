package analyze

import (
	"go/build"
	"strings"
	"testing"
)

// The analysis is pure: it imports no other agbench package.
func TestImportsNoAgbenchPackage(t *testing.T) {
	p, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range p.Imports {
		if strings.HasPrefix(imp, "github.com/agbench/agbench/") {
			t.Errorf("analyze imports %s", imp)
		}
	}
}
