package render

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/agbench/agbench/internal/result"
)

// Merged says which segments a merged run was made of, on which hosts, how far apart they
// began each step, and which are missing; nothing for a run that was not merged.
func Merged(w io.Writer, r *result.Result) {
	m := r.Meta.Merged
	if m == nil {
		return
	}
	var segs []string
	for _, s := range m.Segments {
		state := ""
		if !s.Complete {
			state = ", incomplete"
		}
		segs = append(segs, fmt.Sprintf("%d (%s%s)", s.Index, s.Host, state))
	}
	fmt.Fprintf(w, "segments  %d of %d merged: %s\n", len(m.Segments), m.Of, strings.Join(segs, ", "))
	if len(m.Missing) > 0 {
		miss := make([]string, len(m.Missing))
		for i, n := range m.Missing {
			miss[i] = fmt.Sprint(n)
		}
		fmt.Fprintf(w, "segments  missing: %s (the run is incomplete)\n", strings.Join(miss, ", "))
	}
	spread := m.StartSpread()
	steps := make([]int, 0, len(spread))
	for s := range spread {
		steps = append(steps, s)
	}
	sort.Ints(steps)
	for _, s := range steps {
		fmt.Fprintf(w, "segments  step %d began within %.1f ms of each other (by the database's clock)\n", s+1, spread[s]*1000)
	}
}
