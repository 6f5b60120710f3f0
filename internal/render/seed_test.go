package render

import (
	"strings"
	"testing"
)

// Each recorded seeding, rebuilt from its step's section, is what `agbench seed` printed
// before the result's path; with --compare, the article's table over the variants the run
// recorded in its configuration.
func TestSeedingOfRecordedRuns(t *testing.T) {
	r := recorded(t, "seed")
	var b strings.Builder
	for i := range r.Steps {
		s, err := r.Steps[i].Seeding()
		if err != nil || s == nil {
			t.Fatalf("step %d: seeding %v, %v", i, s, err)
		}
		Seeding(&b, s)
	}
	if !strings.HasPrefix(commandGolden(t, "seed"), b.String()+"\nresult: ") {
		t.Errorf("the seeding is not how the command's output begins:\n%s", b.String())
	}

	r = recorded(t, "seed-compare")
	var variants []string
	for _, v := range r.Meta.Config["variants"].([]any) {
		variants = append(variants, v.(string))
	}
	b.Reset()
	SeedCompare(&b, r, variants)
	if !strings.HasPrefix(commandGolden(t, "seed-compare"), b.String()+"\nresult: ") {
		t.Errorf("the comparison is not how the command's output begins:\n%s", b.String())
	}
	for _, want := range []string{"direct/lz4", "backup-restore/none", "compression ratio", "database files streamed per seeding"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
}
