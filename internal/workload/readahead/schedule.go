package readahead

// Run is one measurement of the schedule: a query, prefetch off or on, one repeat.
type Run struct {
	Query    Query
	Prefetch bool
	Repeat   int
}

// Variant names a run's side of the comparison as results name it.
func Variant(prefetch bool) string {
	if prefetch {
		return "prefetch=on"
	}
	return "prefetch=off"
}

// Schedule lists the runs in the order they execute: for each repeat, each query off and
// on back to back, the order of the pair alternating (off, on / on, off) so that neither
// side always runs second on a machine that drifts.
func Schedule(queries []Query, repeat int) []Run {
	var out []Run
	for r := 0; r < repeat; r++ {
		for i, q := range queries {
			first := (r+i)%2 == 1
			out = append(out, Run{Query: q, Prefetch: first, Repeat: r}, Run{Query: q, Prefetch: !first, Repeat: r})
		}
	}
	return out
}
