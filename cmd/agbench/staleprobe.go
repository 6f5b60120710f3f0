package main

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/table"
	"github.com/agbench/agbench/internal/target"
)

// staleProbeFlag registers --stale-probe on a load command.
func staleProbeFlag(fs *pflag.FlagSet, v *string) {
	fs.StringVar(v, "stale-probe", "", "beside the load, a writer commits a row and a read-intent session reads it at once: eventual (the session as the load's), causal (it names the write's LSN to the listener, agbench.min_lsn), both (side by side); reports the share of stale reads and the time until the write was visible (tpcc run --mode client: also its Order-Status after the VU's own Payment)")
	fs.Lookup("stale-probe").NoOptDefVal = result.StaleEventual
}

// staleProbeMode checks --stale-probe against the run: the probe needs read intent, and
// its causal mode a listener that reads agbench.min_lsn (--listener, or --compare
// routing's own listeners).
func staleProbeMode(v string, readIntent bool, tgt *target.Target, routing bool) (string, error) {
	switch strings.ToLower(v) {
	case "", "off":
		return "", nil
	case "on", result.StaleEventual, result.StaleCausal, result.StaleBoth:
	default:
		return "", agerr.BadInputf("--stale-probe %q: want eventual, causal or both", v)
	}
	mode := strings.ToLower(v)
	if mode == "on" {
		mode = result.StaleEventual
	}
	switch {
	case !readIntent && !routing:
		return "", agerr.BadInputf("--stale-probe: the probe reads with read intent; give it to the load too (--intent read-only, tpcc --read-intent, or --compare routing=off,on)")
	case tgt != nil && len(tgt.Standbys) == 0 && tgt.Listener == "" && !routing:
		return "", agerr.BadInputf("--stale-probe: no standby to read from (--cluster with standbys, --standby or --listener)")
	case mode != result.StaleEventual && tgt != nil && tgt.Listener == "" && !routing:
		return "", agerr.BadInputf("--stale-probe %s: needs a listener to route by LSN (--listener, or --compare routing=off,on)", mode)
	}
	return mode, nil
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

// withStale adds the probes' columns when the run has them.
func withStale(cols []table.Column, l *experiment.Load) []table.Column {
	out := cols
	for _, m := range []string{result.StaleEventual, result.StaleCausal} {
		if l.StaleProbe == m || l.StaleProbe == result.StaleBoth {
			out = append(append([]table.Column(nil), out...), staleColumns(m)...)
		}
	}
	return out
}
