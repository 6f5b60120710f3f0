package render

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/stats"
	"github.com/agbench/agbench/internal/table"
	"github.com/agbench/agbench/internal/units"
)

// ms is microseconds as milliseconds with one decimal ("1.5ms").
func ms(us int64) string { return fmt.Sprintf("%.1fms", float64(us)/1000) }

// groupInt is a figure rounded to a whole number with thousands grouped ("29,000").
func groupInt(v float64) string { return units.GroupInt(int64(v + 0.5)) }

// TPCCSetup is what tpcc run's tables need beyond the steps: the database's warehouses,
// the mode the transactions ran in, the --compare variants ("routing=off"; none without),
// the repeats of each step and the run's segment (nil for a whole run).
type TPCCSetup struct {
	Warehouses int
	Mode       string
	Variants   []string
	Repeat     int
	Segment    *result.Segment
}

// load is a step's load: its VUs, or its terminals over the pool's sessions.
func (s TPCCSetup) load(st *result.Step) result.Load {
	return result.LoadOf(st, s.Segment, "vus", "VUs")
}

// TPCC prints the articles' table (VUs | NOPM | TPM | NEWORD p95 | p99, per variant side by
// side), the server's cross-check, then each step's transactions.
func TPCC(w io.Writer, s TPCCSetup, steps []result.Step) {
	fmt.Fprintf(w, "\ntpcc: %d warehouses, %s mode\n", s.Warehouses, s.Mode)
	SegmentLine(w, s.Segment)
	fmt.Fprintln(w)
	compare := len(s.Variants) > 0
	variants := []string{""}
	if compare {
		variants = s.Variants
	}
	type key struct {
		load    string
		variant string
	}
	byKey := map[key][]*result.Step{}
	var loads []string
	loadHead := "VUs"
	for i := range steps {
		st := &steps[i]
		l := s.load(st)
		loadHead = l.Head()
		if !slices.Contains(loads, l.Cell()) {
			loads = append(loads, l.Cell())
		}
		k := key{l.Cell(), st.Variant}
		byKey[k] = append(byKey[k], st)
	}
	tw := table.NewWriter(w, table.Right)
	all := &result.Result{Steps: steps}
	cols, rate, lag := "NOPM\tTPM\tNEWORD p95\tp99\t", table.HasRate(all), table.LagColumns(all)
	if rate {
		cols += rateHeads()
	}
	cols += stepsHeads(lag)
	if compare {
		group := "\t"
		for _, v := range variants {
			group += v + strings.Repeat("\t", strings.Count(cols, "\t"))
		}
		fmt.Fprintln(tw, group)
	}
	head := loadHead + "\t" + strings.Repeat(cols, len(variants))
	fmt.Fprintln(tw, head+"server NOPM\tserver TPM\t")
	for _, n := range loads {
		line := n + "\t"
		var srvNOPM, srvTPM []string
		for _, v := range variants {
			sts := byKey[key{n, v}]
			if len(sts) == 0 {
				line += strings.Repeat(table.Absent+"\t", strings.Count(cols, "\t"))
				continue
			}
			cells, nopm, tpm := tpccCells(sts)
			line += cells
			if rate {
				line += rateCells(sts)
			}
			line += stepsCells(sts, lag)
			srvNOPM, srvTPM = append(srvNOPM, nopm), append(srvTPM, tpm)
		}
		fmt.Fprintln(tw, line+strings.Join(srvNOPM, " / ")+"\t"+strings.Join(srvTPM, " / ")+"\t")
	}
	tw.Flush()
	fmt.Fprintln(w, "(server: the districts' next order ids and pg_stat_database commits+rollbacks on the primary"+
		map[bool]string{true: ", per variant", false: ""}[compare]+")")
	if s.Repeat > 1 {
		fmt.Fprintf(w, "(medians of %d repeats)\n", s.Repeat)
	}
	LagNotes(w, all)

	for i := range steps {
		tpccStep(w, &steps[i], s.load(&steps[i]))
	}
	NodeHostsBy(w, steps, loadHead, func(st *result.Step) string { return s.load(st).Cell() })
}

// tpccCells are the cells of one row and variant of the articles' table, medians of the
// repeats: NOPM, TPM, New-Order p95 and p99, and the server's NOPM and TPM apart. A figure
// absent from every repeat (not measured) is "–"; the median is of the repeats that have it.
func tpccCells(sts []*result.Step) (cells, srvNOPM, srvTPM string) {
	median := func(f func(*result.Step) (float64, bool), format func(float64) string) string {
		var vals []float64
		for _, st := range sts {
			if v, ok := f(st); ok {
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			return "–"
		}
		return format(stats.Median(vals))
	}
	counter := func(name string) string {
		return median(func(st *result.Step) (float64, bool) { v, ok := st.Counters[name]; return v, ok }, groupInt)
	}
	latency := func(q func(result.Hist) int64) string {
		return median(func(st *result.Step) (float64, bool) {
			if no := st.Ops[result.TPCCOps[0]]; no != nil && no.Count > 0 {
				return float64(q(no.Latency)), true
			}
			return 0, false
		}, func(us float64) string { return ms(int64(us)) })
	}
	cells = counter(result.TPCCNOPM) + "\t" + counter(result.TPCCTPM) + "\t" +
		latency(func(h result.Hist) int64 { return h.P95 }) + "\t" + latency(func(h result.Hist) int64 { return h.P99 }) + "\t"
	return cells, counter(result.TPCCServerNOPM), counter(result.TPCCServerTPM)
}

// rateHeads and rateCells are a fixed-rate run's columns of the articles' table
// (table.RateColumns): the rate asked, the transactions started per second, late starts.
func rateHeads() string { return stepsHeads(table.RateColumns()) }

func rateCells(sts []*result.Step) string { return stepsCells(sts, table.RateColumns()) }

// stepsHeads and stepsCells are columns of the articles' table (tab-ended) and their cells
// for one row and variant.
func stepsHeads(cols []table.Column) string {
	h := ""
	for _, c := range cols {
		h += c.Header + "\t"
	}
	return h
}

func stepsCells(sts []*result.Step, cols []table.Column) string {
	out := ""
	for _, c := range cols {
		out += table.StepsCell(sts, c) + "\t"
	}
	return out
}

// tpccStep prints one step's transactions (its load l), where its reads landed, its faults,
// its server cross-check, warnings and whether it was cut short.
func tpccStep(w io.Writer, st *result.Step, l result.Load) {
	variant := ""
	if st.Variant != "" {
		variant = " " + st.Variant
	}
	fmt.Fprintf(w, "\nstep %d: %s%s, %.0fs window, client CPU %.0fµs/tx (%.0f%% of the host)\n", st.Index+1, l,
		variant, st.Window.Seconds(), st.Client.PerOpMicros, 100*st.Client.Utilisation)
	tw := table.NewWriter(w, table.Right)
	fmt.Fprintln(tw, "tx\tcount\terrors\tretries\tp50\tp95\tp99\tp99.9\tmax\t")
	for _, k := range result.TPCCOps {
		op := st.Ops[k]
		if op == nil {
			continue
		}
		h := op.Latency
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t\n", k, op.Count, op.Errors, op.Retries,
			ms(h.P50), ms(h.P95), ms(h.P99), ms(h.P999), ms(h.Max))
	}
	tw.Flush()
	Terminals(w, st, l.Segment)
	var notes []string
	if n, ok := st.Counters[result.ReadTxOnStandby]; ok {
		notes = append(notes, fmt.Sprintf("read transactions on a standby %s, on the primary %s",
			groupInt(n), groupInt(st.Counters[result.ReadTxOnPrimary])))
	}
	if b, ok := st.Counters[result.TPCCLagBytesMax]; ok {
		secs := "– s (pg_stat_replication's replay_lag was NULL with a standby behind at every read: not measured)"
		if v, ok := st.Counters[result.TPCCLagSecondsMax]; ok {
			secs = fmt.Sprintf("%.3fs", v)
		}
		notes = append(notes, fmt.Sprintf("max replay lag %s bytes, %s", groupInt(b), secs))
	}
	notes = append(notes, StepFaults(st)...)
	notes = append(notes, fmt.Sprintf("rolled-back new orders %s; server NOPM %s, TPM %s (client on the primary %s)",
		optNum(st.Counters, result.TPCCRolledBack), optNum(st.Counters, result.TPCCServerNOPM),
		optNum(st.Counters, result.TPCCServerTPM), optNum(st.Counters, result.TPCCPrimaryTPM)))
	for _, n := range notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
	for _, warn := range st.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warn)
	}
	if !st.Complete {
		fmt.Fprintf(w, "  incomplete: %s\n", st.IncompleteReason)
	}
}

// optNum is a counter as groupInt shows it, or "–" when the step does not have it.
func optNum(c map[string]float64, name string) string {
	if v, ok := c[name]; ok {
		return groupInt(v)
	}
	return "–"
}
