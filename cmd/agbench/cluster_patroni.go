package main

import (
	"fmt"
	"io"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/table"
	"github.com/agbench/agbench/internal/units"
)

// printPatroni shows Patroni's settings and its view of the members (GET /cluster), under
// the node table, when Patroni runs the cluster.
func printPatroni(w io.Writer, st *cluster.Status) {
	if st.Patroni == nil {
		return
	}
	fmt.Fprintf(w, "\nha: %s\n", st.Patroni)
	v := st.PatroniView
	if v == nil || v.Error != "" {
		why := "not read"
		if v != nil {
			why = v.Error
		}
		fmt.Fprintf(w, "Patroni's view: – (%s)\n", why)
		return
	}
	fmt.Fprintf(w, "Patroni's view (GET %s/cluster):\n", v.From)
	tw := table.NewWriter(w, table.Left)
	fmt.Fprintln(tw, "MEMBER\tROLE\tSTATE\tTIMELINE\tLAG\tREST API")
	for _, m := range v.Members {
		tl, lag := "-", "-"
		if m.Timeline > 0 {
			tl = fmt.Sprint(m.Timeline)
		}
		if l := m.Lag(); l != nil {
			lag = units.FormatBytes(*l)
		} else if len(m.RawLag) > 0 {
			lag = string(m.RawLag)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, m.Role, m.State, tl, lag, m.APIURL)
	}
	tw.Flush()
	if v.Pause {
		fmt.Fprintln(w, "Patroni is paused: it fails nothing over")
	}
}
