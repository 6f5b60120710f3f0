package main

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/result"
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
