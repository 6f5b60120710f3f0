package render

import (
	"fmt"
	"io"

	"github.com/agbench/agbench/internal/status"
	"github.com/agbench/agbench/internal/units"
)

// Failover is what `cluster failover` prints of its report: the kind of failover, how long
// writes were unavailable and the whole took, how long commits waited for the old primary
// to rejoin as the only synchronous standby (commitsWaited), the WAL the new primary
// lacked, and each node that did not rejoin.
func Failover(w io.Writer, r *status.FailoverReport, commitsWaited bool) {
	kind := "unplanned (primary was down)"
	switch {
	case r.Planned:
		kind = "planned (primary shut down cleanly first: no data loss)"
	case r.Silent:
		kind = "unplanned (primary did not answer: fenced)"
	case !r.FencedAt.IsZero():
		kind = "unplanned (primary fenced)"
	}
	fmt.Fprintf(w, "\nfailover %s -> %s, %s\nwrites unavailable for %.3fs; total %.3fs; old primary %s: %s\n",
		r.From, r.To, kind, r.WriteOutage.Seconds(), r.Total.Seconds(), r.From, r.OldPrimary)
	if commitsWaited {
		if r.RejoinedAt.IsZero() {
			fmt.Fprintf(w, "commits still wait: %s has no synchronous standby until %s rejoins as one (it did not)\n", r.To, r.From)
		} else {
			fmt.Fprintf(w, "commits waited for %.3fs: %s had no synchronous standby until %s rejoined as one (pg_rewind, start, streaming)\n",
				r.RejoinedAt.Sub(r.PromotedAt.Add(-r.WriteOutage)).Seconds(), r.To, r.From)
		}
	}
	switch {
	case r.WALLacked != nil:
		fmt.Fprintf(w, "WAL %s lacked of %s: %s\n", r.To, r.From, units.FormatBytesShort(*r.WALLacked))
	case r.WALLackedNote != "":
		fmt.Fprintf(w, "WAL %s lacked of %s: %s\n", r.To, r.From, r.WALLackedNote)
	}
	for node, p := range r.Problems {
		fmt.Fprintf(w, "problem on %s: %s\n", node, p)
	}
	fmt.Fprintln(w)
}
