package analyze

import (
	"go/build"
	"strings"
	"testing"
)

// The analysis is pure: of agbench it imports only the result schema it reads and the leaf
// helpers stats and units.
func TestImportsNoAgbenchPackage(t *testing.T) {
	p, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range p.Imports {
		if strings.HasPrefix(imp, "github.com/agbench/agbench/") && imp != "github.com/agbench/agbench/internal/result" &&
			imp != "github.com/agbench/agbench/internal/stats" && imp != "github.com/agbench/agbench/internal/units" {
			t.Errorf("analyze imports %s", imp)
		}
	}
}
