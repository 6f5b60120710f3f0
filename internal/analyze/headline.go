package analyze

import "github.com/agbench/agbench/internal/result"

// Headline is the one figure by which a run's variants are ranked: the analysis's
// comparison, the report's headline and `agbench compare` all use it, so that they never
// name different winners for one result (ops/s and NOPM, or ops/s and MB/s, can rank two
// variants differently).
type Headline struct {
	// Name is the step counter the figure is (Counter), or HeadlineOps.
	Name string
	// Label is how tables and sentences name it: "NOPM", "IOPS", "MB/s", "ops/s".
	Label string
	// Counter says the figure is the step counter Name.
	Counter bool
}

// HeadlineOps is the figure a headline is when it is no counter: operations per second.
const HeadlineOps = "ops"

// headlineCounters are the counters that make a run's headline, in order of preference:
// TPC-C's New-Orders per minute, a storage test's IOPS, then its MB/s (the tester's own).
// The servers' MB/s (server_mb_per_s: buffer hits and reads of every session on the
// database, agbench's samplers and the server's own work included) is no headline: for a
// query that reads little it is mostly other sessions' (a SELECT 1 at 200/s read "8 MB/s" on
// one node and "1 MB/s" on the other), and where the query's reads dominate it ranks variants
// as its operations per second do. Nor are the bytes the client received.
var headlineCounters = []struct{ name, label string }{
	{"nopm", "NOPM"}, {"iops", "IOPS"}, {result.MBps, "MB/s"},
}

// HeadlineOf chooses a run's headline: the first of headlineCounters that has says the run
// has, else operations per second.
func HeadlineOf(has func(counter string) bool) Headline {
	for _, c := range headlineCounters {
		if has(c.name) {
			return Headline{Name: c.name, Label: c.label, Counter: true}
		}
	}
	return Headline{Name: HeadlineOps, Label: "ops/s"}
}

// HeadlineOfSteps is HeadlineOf for the steps of one result: a counter any step has.
func HeadlineOfSteps(steps []result.Step) Headline {
	return HeadlineOf(func(c string) bool {
		for i := range steps {
			if _, ok := steps[i].Counters[c]; ok {
				return true
			}
		}
		return false
	})
}

// Of is a step's figure; ok is false when the step did not measure it (a counter it lacks).
func (h Headline) Of(st *result.Step) (float64, bool) {
	if h.Counter {
		v, ok := st.Counters[h.Name]
		return v, ok
	}
	return st.OpsPerSecond(), true
}
