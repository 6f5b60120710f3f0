package report

import (
	"fmt"
	"sort"

	"github.com/agbench/agbench/internal/result"
)

// StaleTable is the stale-read probe's table (result.StaleStep): per step and per node the
// probe's reads landed on, how many missed the write committed just before, the time until
// it was visible and how long the read session took to start. Empty when no step carries
// the probe's section.
func (e *Experiment) StaleTable() Table {
	t := Table{Name: e.slug() + "-stale-reads", Title: e.name() + ": stale reads (read-after-write probe)",
		Columns: []string{"step", "mode", "node", "reads", "stale", "stale %", "visible p50 ms", "visible p99 ms", "session p50 ms", "session p99 ms", "never seen", "failed probes"}}
	for _, r := range e.Runs {
		for i := range r.Result.Steps {
			st := &r.Result.Steps[i]
			probes, err := st.StaleProbes()
			if err != nil {
				continue // a section that does not decode fails the run's reading (Run.read)
			}
			for _, s := range probes {
				e.staleRows(&t, r, st, s)
			}
		}
	}
	return t
}

// staleRows adds one probe's rows of a step.
func (e *Experiment) staleRows(t *Table, r *Run, st *result.Step, s *result.StaleStep) {
	step := fmt.Sprintf("%d", st.Index+1)
	if st.Variant != "" {
		step += " " + st.Variant
	}
	if len(e.Runs) > 1 {
		step = r.Label + ": " + step
	}
	names := make([]string, 0, len(s.Nodes))
	for n := range s.Nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		t.add(txt(step), txt(s.Mode), blank(), intc(0), blank(), blank(), blank(), blank(), blank(), blank(), blank(), intc(s.Errors))
	}
	for _, name := range names {
		n := s.Nodes[name]
		share := blank()
		if v, ok := n.StaleShare(); ok {
			share = num(100 * v)
		}
		vis50, vis99 := blank(), blank()
		if n.Visible.Count > 0 {
			vis50, vis99 = numMs(n.Visible.P50), numMs(n.Visible.P99)
		}
		ses50, ses99 := blank(), blank()
		if n.Session.Count > 0 {
			ses50, ses99 = numMs(n.Session.P50), numMs(n.Session.P99)
		}
		t.add(txt(step), txt(s.Mode), txt(name), intc(n.Reads), intc(n.Stale), share, vis50, vis99, ses50, ses99, intc(n.Unseen), intc(s.Errors))
	}
}
