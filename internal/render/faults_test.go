package render

import (
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/table"
)

// The footer of a recorded load run (where sessions landed, faults, warnings, the result's
// path) ends what the command printed, byte for byte.
func TestFooterOfRecordedRuns(t *testing.T) {
	for _, name := range []string{"stress", "stress-rerun", "scan"} {
		r := recorded(t, name)
		golden := commandGolden(t, name)
		last := golden[strings.LastIndex(strings.TrimSuffix(golden, "\n"), "\n")+1:]
		path, ok := strings.CutPrefix(strings.TrimSuffix(last, "\n"), "result  ")
		if !ok {
			t.Fatalf("%s: the command's last line is not its result: %q", name, last)
		}
		var b strings.Builder
		Footer(&b, r, path, table.Landed(r))
		if !strings.HasSuffix(golden, b.String()) {
			t.Errorf("%s: the footer is not how the command's output ends:\n%s", name, b.String())
		}
		if name != "scan" && !strings.Contains(b.String(), "landed  routing=on: standby1 (standby)") {
			t.Errorf("%s: where sessions landed is missing:\n%s", name, b.String())
		}
	}
}
