package render

import (
	"fmt"
	"io"

	"github.com/agbench/agbench/internal/status"
	"github.com/agbench/agbench/internal/table"
)

// ListenerBanner is what `agbench listener` prints when it starts: where it listens, its
// routing, what read-intent sessions must see, how it forwards, and a row per backend.
func ListenerBanner(w io.Writer, l status.ListenerState) {
	fmt.Fprintf(w, "agbench listener on %s", l.Addr)
	if l.ReadOnlyAddr != "" {
		fmt.Fprintf(w, ", read-only port %s", l.ReadOnlyAddr)
	}
	if l.MetricsAddr != "" {
		fmt.Fprintf(w, ", metrics http://%s/metrics", l.MetricsAddr)
	}
	fmt.Fprintln(w)
	switch {
	case !l.Routing:
		fmt.Fprintln(w, "routing: off (read intent goes to the primary)")
	case l.RoutingList == "":
		fmt.Fprintln(w, "routing list: every standby (load-balanced), then the primary")
	default:
		fmt.Fprintf(w, "routing list: %s\n", l.RoutingList)
	}
	for n, list := range l.RoutingLists {
		fmt.Fprintf(w, "routing list while %s is primary: %s\n", n, list)
	}
	if l.ConsistencyShown {
		fmt.Fprintf(w, "consistency: %s (causal wait %s)\n", l.Consistency, l.CausalWait)
	}
	if l.MaxLag > 0 {
		fmt.Fprintf(w, "max lag: %s\n", l.MaxLag)
	}
	fmt.Fprintf(w, "forwarding after startup: %s\n", l.Forwarding)
	tw := table.NewWriter(w, table.Left)
	fmt.Fprintln(tw, "NODE\tADDRESS\tROLE\tUP\tLAG")
	for _, n := range l.Nodes {
		up := "yes"
		if !n.Up {
			up = "no: " + n.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", n.Name, n.Addr, n.Role, up, lagCell(n))
	}
	tw.Flush()
}

// lagCell is a node's LAG: "–" where the lag was not measured, with why for a standby
// that answers probes (for the others the role and UP columns say it).
func lagCell(n status.ListenerNode) string {
	switch {
	case n.LagSeconds != nil:
		return fmt.Sprintf("%.1fs", *n.LagSeconds)
	case n.Up && n.Role == status.RoleStandby && n.LagUnknown != "":
		return table.Absent + " (" + n.LagUnknown + ")"
	}
	return table.Absent
}
