package main

import (
	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/result"
)

// staleProbeFlag registers --stale-probe on a load command.
func staleProbeFlag(fs *pflag.FlagSet, v *string) {
	fs.StringVar(v, "stale-probe", "", "beside the load, a writer commits a row and a read-intent session reads it at once: eventual (the session as the load's), causal (it names the write's LSN to the listener, agbench.min_lsn), both (side by side); reports the share of stale reads and the time until the write was visible (tpcc run --mode client: also its Order-Status after the VU's own Payment)")
	fs.Lookup("stale-probe").NoOptDefVal = result.StaleEventual
}
