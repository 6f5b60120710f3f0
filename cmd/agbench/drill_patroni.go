package main

import (
	"fmt"
	"io"

	"github.com/agbench/agbench/internal/result"
)

// printDrillPatroni says, under Patroni, what Patroni did in each cycle and with which
// timing (nothing without Patroni).
func printDrillPatroni(w io.Writer, r *result.Result, run *result.DrillRun) {
	if run.Patroni == nil {
		return
	}
	pt := run.Patroni
	kill := ""
	if pt.Kill != "" {
		kill = ", kill-primary killed " + pt.Kill
	}
	fmt.Fprintf(w, "\nfailed over by Patroni (ttl %ds, loop_wait %ds, retry_timeout %ds, synchronous_mode %s%s); failover s is from the fault until Patroni's REST API showed the new primary running\n",
		pt.TTL, pt.LoopWait, pt.RetryTimeout, syncMode(pt), kill)
	for i := range r.Steps {
		dc, _ := r.Steps[i].DrillCycle()
		if dc == nil || dc.HAOutcome == "" {
			continue
		}
		tl := ""
		if dc.PGTimeline > 0 {
			tl = fmt.Sprintf(" (timeline %d)", dc.PGTimeline)
		}
		fmt.Fprintf(w, "cycle %d: %s%s\n", dc.Cycle, dc.HAOutcome, tl)
	}
}

// syncMode is Patroni's synchronous_mode and what its strictness means for commits when no
// synchronous standby is left; the strictness absent when GET /config was not read.
func syncMode(pt *result.DrillPatroni) string {
	switch {
	case !pt.SynchronousMode:
		return "off"
	case pt.SynchronousModeStrict == nil:
		return "on, synchronous_mode_strict – (GET /config not read)"
	case *pt.SynchronousModeStrict:
		return "on, strict: commits wait while no synchronous standby streams"
	}
	return "on, not strict: with no synchronous standby left, commits are acknowledged without one"
}
