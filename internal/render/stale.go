package render

import (
	"fmt"
	"io"
	"sort"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/table"
)

// Stale writes the probes' figures per step and node under the table, and tpcc's
// own-write reads (result.StaleOwnWrites).
func Stale(w io.Writer, r *result.Result) {
	head := false
	for i := range r.Steps {
		st := &r.Steps[i]
		probes, err := st.StaleProbes()
		if err != nil {
			fmt.Fprintf(w, "stale reads, step %d: %v\n", st.Index+1, err)
			continue
		}
		for _, s := range probes {
			if !head {
				fmt.Fprintln(w, "stale reads: reads that missed a write committed just before; visible: time from the commit until a read saw it; start: opening the read session (a causal wait is part of it); own-writes: tpcc's Order-Status after the VU's own Payment of that customer")
				head = true
			}
			staleProbe(w, st, s)
		}
	}
	if head {
		fmt.Fprintln(w)
	}
}

// staleProbe writes one probe's line per node of a step, and its failed probes.
func staleProbe(w io.Writer, st *result.Step, s *result.StaleStep) {
	names := make([]string, 0, len(s.Nodes))
	for n := range s.Nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	step := fmt.Sprintf("step %d", st.Index+1)
	if st.Variant != "" {
		step += " (" + st.Variant + ")"
	}
	step += " " + s.Mode
	if len(names) == 0 {
		fmt.Fprintf(w, "  %s: %s no probe read ran\n", step, table.Absent)
	}
	ms := func(h result.Hist, us int64) string {
		if h.Count == 0 {
			return table.Absent
		}
		return fmt.Sprintf("%.2f", float64(us)/1000)
	}
	for _, name := range names {
		n := s.Nodes[name]
		share, _ := n.StaleShare()
		if s.Mode == result.StaleOwnWrites {
			fmt.Fprintf(w, "  %s %s: %d/%d Order-Status after the VU's own Payment saw fewer payments (%.1f%% stale)\n",
				step, name, n.Stale, n.Reads, 100*share)
			continue
		}
		line := fmt.Sprintf("  %s %s: %d/%d stale (%.1f%%), visible p50 %s ms p99 %s ms, start p50 %s ms p99 %s ms",
			step, name, n.Stale, n.Reads, 100*share, ms(n.Visible, n.Visible.P50), ms(n.Visible, n.Visible.P99),
			ms(n.Session, n.Session.P50), ms(n.Session, n.Session.P99))
		if n.Unseen > 0 {
			line += fmt.Sprintf(", %d never seen", n.Unseen)
		}
		fmt.Fprintln(w, line)
	}
	if s.Errors > 0 {
		fmt.Fprintf(w, "  %s: %d probe(s) failed: %s\n", step, s.Errors, s.ErrorSample)
	}
}
