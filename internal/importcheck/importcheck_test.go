package importcheck

import "testing"

// recorder is a testing.TB that keeps the failures instead of failing.
type recorder struct {
	testing.TB
	errors int
}

func (r *recorder) Errorf(string, ...any) { r.errors++ }
func (r *recorder) Helper()               {}

func TestForbidFindsAnImport(t *testing.T) {
	r := &recorder{TB: t}
	Forbid(r, ".", "go/parser") // this package's own file imports go/parser
	if r.errors != 1 {
		t.Fatalf("want one forbidden import found, got %d", r.errors)
	}
	r = &recorder{TB: t}
	Forbid(r, ".", "/internal/runner")
	if r.errors != 0 {
		t.Fatalf("want none, got %d", r.errors)
	}
}
