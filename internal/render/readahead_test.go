package render

import (
	"strings"
	"testing"
)

// The recorded readahead run's conditions and STATISTICS IO table, rebuilt from its run
// section, are what `agbench readahead` printed before the result's folder.
func TestReadaheadOfARecordedRun(t *testing.T) {
	r := recorded(t, "readahead")
	ra, err := r.ReadaheadRun()
	if err != nil || ra == nil {
		t.Fatalf("readahead section %v, %v", ra, err)
	}
	var b strings.Builder
	Readahead(&b, ra.Conditions, ra.Table, r.Warnings)
	if !strings.HasPrefix(commandGolden(t, "readahead"), b.String()+"\nresult: ") {
		t.Errorf("the table is not how the command's output begins:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "testtable ") || !strings.Contains(b.String(), "PREFETCH") {
		t.Errorf("lacks the tables' sizes or the table's head:\n%s", b.String())
	}
}
