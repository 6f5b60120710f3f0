package analyze

import "github.com/agbench/agbench/internal/result"

// Headline is the one figure by which a run's variants are ranked: the analysis's
// comparison, the report's headline and `agbench compare` all use it, so that they never
// name different winners for one result (ops/s and NOPM, or ops/s and MB/s, can rank two
// variants differently).
type Headline struct {
	// Name is the step counter the figure is (Counter), or HeadlineBytes or HeadlineOps.
	Name string
	// Label is how tables and sentences name it: "NOPM", "IOPS", "MB/s", "ops/s".
	Label string
	// Counter says the figure is the step counter Name.
	Counter bool
}

// The figures a headline is when it is no counter: MB/s of the bytes the operations moved,
// and operations per second.
const (
	HeadlineBytes = result.MBps
	HeadlineOps   = "ops"
)

// headlineCounters are the counters that make a run's headline, in order of preference:
// TPC-C's New-Orders per minute, a storage test's IOPS, then its MB/s (the server's, or the
// tester's own).
var headlineCounters = []struct{ name, label string }{
	{"nopm", "NOPM"}, {"iops", "IOPS"}, {result.ServerMBps, "MB/s"}, {result.MBps, "MB/s"},
}

// HeadlineOf chooses a run's headline: the first of headlineCounters that has says the run
// has, else MB/s when its operations moved bytes, else operations per second.
func HeadlineOf(has func(counter string) bool, movesBytes bool) Headline {
	for _, c := range headlineCounters {
		if has(c.name) {
			return Headline{Name: c.name, Label: c.label, Counter: true}
		}
	}
	if movesBytes {
		return Headline{Name: HeadlineBytes, Label: "MB/s"}
	}
	return Headline{Name: HeadlineOps, Label: "ops/s"}
}

// HeadlineOfSteps is HeadlineOf for the steps of one result: a counter any step has, and
// bytes any step moved in a window of some length.
func HeadlineOfSteps(steps []result.Step) Headline {
	has := func(c string) bool {
		for i := range steps {
			if _, ok := steps[i].Counters[c]; ok {
				return true
			}
		}
		return false
	}
	moves := false
	for i := range steps {
		v, _ := stepMBps(&steps[i])
		moves = moves || v > 0
	}
	return HeadlineOf(has, moves)
}

// Of is a step's figure; ok is false when the step did not measure it (a counter it lacks).
func (h Headline) Of(st *result.Step) (float64, bool) {
	switch {
	case h.Counter:
		v, ok := st.Counters[h.Name]
		return v, ok
	case h.Name == HeadlineBytes:
		return stepMBps(st)
	default:
		return st.OpsPerSecond(), true
	}
}

// stepMBps is the MB/s a step's operations moved (0 over a window of no length).
func stepMBps(st *result.Step) (float64, bool) {
	sec := st.Window.Seconds()
	if sec <= 0 {
		return 0, true
	}
	return float64(st.Totals().Bytes) / sec / 1e6, true
}
