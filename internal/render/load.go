package render

import (
	"fmt"
	"io"

	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/table"
)

// Load prints a load run (stress, scan) after it ends: its table over the threads, with a
// fixed rate's columns, the stale-read probe's (stale: the probe's mode, "" for none) and
// the standbys' lag (with where it came from) where it has them, the stale-read lines, the analysis (nil: none) and the footer.
func Load(w io.Writer, r *result.Result, an *analyze.Run, path string, cols []table.Column, stale string) {
	fmt.Fprintln(w)
	SegmentLine(w, r.Meta.Segment)
	if len(r.Steps) > 0 {
		_ = table.Write(w, r, "threads", table.WithLag(r, table.WithRate(r, WithStale(cols, stale)))) // as the footer: a terminal's error is not the run's
		LagNotes(w, r)
		fmt.Fprintln(w)
		Stale(w, r)
		NodeHosts(w, r.Steps, "threads")
	}
	Analysis(w, an)
	Footer(w, r, path, table.Landed(r))
}

// StressColumns are stress's table: the articles' columns (time, MB/s) with throughput and latency.
var StressColumns = []table.Column{
	{Header: "time (s)", Format: "%.2f", Value: windowSeconds},
	{Header: "it/s", Format: "%.0f", Value: perSecond(func(s *result.Step) int64 { return s.Totals().Count })},
	{Header: "MB/s", Format: "%.0f", Value: counterValue(result.ServerMBps)},
	{Header: "rows/s", Format: "%.0f", Value: perSecond(func(s *result.Step) int64 { return s.Totals().Rows })},
	{Header: "p50 ms", Format: "%.2f", Value: latencyMs(func(h result.Hist) int64 { return h.P50 })},
	{Header: "p99 ms", Format: "%.2f", Value: latencyMs(func(h result.Hist) int64 { return h.P99 })},
	{Header: "err", Format: "%.0f", Value: func(s *result.Step) (float64, bool) { return float64(s.Totals().Errors), true }},
}

// windowSeconds is the step's measured window.
func windowSeconds(s *result.Step) (float64, bool) { return s.Window.Seconds(), true }

// counterValue is a step's counter, absent when the step did not measure it (through a
// listener the servers' counters cannot be read, for one).
func counterValue(name string) func(*result.Step) (float64, bool) {
	return func(s *result.Step) (float64, bool) { v, ok := s.Counters[name]; return v, ok }
}

// perSecond is a count of the step per second of its window (absent without a window).
func perSecond(count func(*result.Step) int64) func(*result.Step) (float64, bool) {
	return func(s *result.Step) (float64, bool) {
		sec := s.Window.Seconds()
		if sec <= 0 {
			return 0, false
		}
		return float64(count(s)) / sec, true
	}
}

// latencyMs reads a percentile of the step's merged operation latencies in milliseconds;
// absent when no operation succeeded.
func latencyMs(pick func(result.Hist) int64) func(*result.Step) (float64, bool) {
	return func(s *result.Step) (float64, bool) {
		var hs []result.Hist
		for _, o := range s.Ops {
			hs = append(hs, o.Latency)
		}
		h, err := result.MergeHists(hs...)
		if err != nil || h.Count == 0 {
			return 0, false
		}
		return float64(pick(h)) / 1000, true
	}
}

// ScanColumns are scan's table: rows and MB received per second, and the servers' buffer
// hits, reads and MB/s.
var ScanColumns = []table.Column{
	{Header: "time (s)", Format: "%.2f", Value: windowSeconds},
	{Header: "rows/s", Format: "%.0f", Value: perSecond(func(s *result.Step) int64 { return s.Totals().Rows })},
	{Header: "MB/s recv", Format: "%.1f", Value: func(s *result.Step) (float64, bool) {
		v, ok := perSecond(func(s *result.Step) int64 { return s.Totals().Bytes })(s)
		return v / 1e6, ok
	}},
	{Header: "hits", Format: "%.0f", Value: counterValue(result.BufferHits)},
	{Header: "reads", Format: "%.0f", Value: counterValue(result.BufferReads)},
	{Header: "MB/s server", Format: "%.1f", Value: counterValue(result.ServerMBps)},
}

// staleColumns are a probe mode's figures over every node: the share of reads that
// missed the write, and the 99th percentile of the time until it was visible (eventual) or
// the median start of the read session, the listener's wait included (causal). Absent
// without that probe, or without a read in the step.
func staleColumns(mode string) []table.Column {
	share := table.Column{Header: "stale %", Format: "%.1f", Value: staleFigure(mode, func(n result.StaleNode) (float64, bool) {
		s, ok := n.StaleShare()
		return 100 * s, ok
	})}
	if mode == result.StaleEventual {
		return []table.Column{share, {Header: "visible p99 ms", Format: "%.2f", Value: staleFigure(mode, func(n result.StaleNode) (float64, bool) {
			return float64(n.Visible.P99) / 1000, n.Visible.Count > 0
		})}}
	}
	share.Header = "causal stale %"
	return []table.Column{share, {Header: "causal start p50 ms", Format: "%.2f", Value: staleFigure(mode, func(n result.StaleNode) (float64, bool) {
		return float64(n.Session.P50) / 1000, n.Session.Count > 0
	})}}
}

func staleFigure(mode string, pick func(result.StaleNode) (float64, bool)) func(*result.Step) (float64, bool) {
	return func(s *result.Step) (float64, bool) {
		st, err := s.StaleProbe(mode)
		if err != nil || st == nil {
			return 0, false
		}
		all, err := st.All()
		if err != nil {
			return 0, false
		}
		return pick(all)
	}
}

// WithStale adds the columns of the stale-read probe's modes that ran (mode as
// --stale-probe gives it: eventual, causal, both; none for "").
func WithStale(cols []table.Column, mode string) []table.Column {
	out := cols
	for _, m := range []string{result.StaleEventual, result.StaleCausal} {
		if mode == m || mode == result.StaleBoth {
			out = append(append([]table.Column(nil), out...), staleColumns(m)...)
		}
	}
	return out
}

// LagNotes prints where the table's standby lag figures came from and why any is absent
// (table.LagNotes), one line each; nothing for a result without lag columns.
func LagNotes(w io.Writer, r *result.Result) {
	for _, n := range table.LagNotes(r) {
		fmt.Fprintln(w, n)
	}
}
