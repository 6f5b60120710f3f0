package report

import "testing"

// The steal warning agbench disk once wrote, at step or run level, is recognised (and left
// to the analysis's steal verdict); other warnings are not.
func TestTesterStealRecognised(t *testing.T) {
	for w, want := range map[string]bool{
		"steal time 8.0%: a noisy neighbour shares the CPUs":                   true,
		"threads 1, QD 2: steal time 10.8%: a noisy neighbour shares the CPUs": true,
		"steal: steal time was 8% of CPU at 1 outstanding IO":                  false,
		"tester busy: 95% of a CPU for 1 thread(s)":                            false,
	} {
		if got := testerSteal(w); got != want {
			t.Errorf("testerSteal(%q) = %v", w, got)
		}
	}
}
