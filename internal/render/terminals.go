package render

import (
	"fmt"
	"io"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/table"
	"github.com/agbench/agbench/internal/units"
)

// Terminals prints a step's emulated terminals, when it had them: how many over how many
// sessions, whether they kept the specification's ten per warehouse, tpmC per warehouse
// against its bound, and per transaction the response time's 90th percentile against the
// limit of clause 5.2.5.4 with the wait for a session inside it and the think times drawn.
// A segment's (seg, nil for a whole run) are its share, on its own warehouses.
func Terminals(w io.Writer, st *result.Step, seg *result.Segment) {
	t, err := st.Terminals()
	if err != nil {
		fmt.Fprintf(w, "  terminals: %v\n", err)
		return
	}
	if t == nil {
		return
	}
	for _, line := range TerminalLines(t, result.LoadOf(st, seg, "", "")) {
		fmt.Fprintf(w, "  %s\n", line)
	}
	tw := table.NewWriter(w, table.Right)
	fmt.Fprintln(tw, "  tx\tresponse p90\tlimit\tqueue p50\tqueue p90\tqueue max\tthink mean\tthink max\t")
	for i, k := range result.TPCCOps {
		op := st.Ops[k]
		if op == nil {
			continue
		}
		q, th := t.QueueWait[k], t.Think[k]
		verdict := "held"
		if op.Count > 0 && op.Latency.P90 > result.ResponseLimitsMicros[i] {
			verdict = "BROKEN"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s %s\t%s\t%s\t%s\t%s\t%s\t\n", k, ms(op.Latency.P90),
			secs(result.ResponseLimitsMicros[i]), verdict, ms(q.P50), ms(q.P90), ms(q.Max), secsF(th.Mean), secs(th.Max))
	}
	tw.Flush()
}

// TerminalLines are the sentences that say a step of terminals (its load l): its shape and
// whether it kept the terminal rule, its tpmC per warehouse against the bound, what was left
// queued. A segment's are its share of the whole run's, on its own warehouses.
func TerminalLines(t *result.TerminalsStep, l result.Load) []string {
	perWH := "–"
	if wh := t.HomeWarehouses(); wh > 0 {
		perWH = fmt.Sprintf("%.4g", float64(t.Terminals)/float64(wh))
	}
	shape := fmt.Sprintf("terminals: %s on %d warehouses (%s per warehouse) over %d sessions",
		groupInt(float64(t.Terminals)), t.Warehouses, perWH, t.Sessions)
	tpmcOf := "tpmC"
	if s := l.Segment; s != nil {
		shape = fmt.Sprintf("terminals: segment %d/%d: %s of %s on its %d of %d warehouses (%s per warehouse) over %d of %d sessions; "+
			"agbench merge judges the whole run", s.Index, s.Of, groupInt(float64(t.Terminals)), groupInt(float64(l.Of)),
			t.HomeWarehouses(), t.Warehouses, perWH, t.Sessions, l.SessionsOf)
		tpmcOf = "tpmC of this segment"
	}
	rule := fmt.Sprintf("within the specification's terminal rule (clause %s: %d per warehouse, keying and think times as clause 5.2.5.7)",
		result.TerminalRuleClause, result.TerminalsPerWarehouse)
	if why := t.OutsideSpec(); why != "" {
		rule = "OUTSIDE the specification, a driver-capacity run: " + why
	}
	bound := t.TpmCBound()
	held := "held"
	if t.TpmCPerWarehouse > bound {
		held = "EXCEEDED"
	}
	tpmc := fmt.Sprintf("%s %s, %s per warehouse (bound %s for these terminals: %s; %.2f with the specification's)",
		tpmcOf, groupInt(t.TpmC), perWarehouse(t.TpmCPerWarehouse), perWarehouse(bound), held, result.MaxTpmCPerWarehouse)
	queued := fmt.Sprintf("response times from the terminal's submission, the wait for a session included (clause %s limits at the 90th percentile); %d request(s) still queued as the window closed",
		result.ResponseTimeRuleClause, t.QueuedAtEnd)
	rss := "– (getrusage not read)"
	if p := t.Driver.PeakRSSBytes; p != nil {
		rss = units.FormatBytes(*p)
	}
	driver := fmt.Sprintf("driver memory: peak RSS %s, Go heap in use %s, Go runtime total %s",
		rss, units.FormatBytes(t.Driver.HeapBytes), units.FormatBytes(t.Driver.GoSysBytes))
	return []string{shape, rule, tpmc, queued, driver}
}

// secs is microseconds as seconds, as short as they go ("5s", "0.12s").
func secs(us int64) string { return secsF(float64(us)) }

func secsF(us float64) string { return fmt.Sprintf("%.3gs", us/1e6) }

// perWarehouse is a tpmC per warehouse: two decimals near the specification's 12.86, whole
// and grouped when far above it.
func perWarehouse(v float64) string {
	if v >= 1000 {
		return groupInt(v)
	}
	return fmt.Sprintf("%.2f", v)
}
