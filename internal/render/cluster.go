package render

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/agbench/agbench/internal/status"
	"github.com/agbench/agbench/internal/table"
	"github.com/agbench/agbench/internal/units"
)

// ClusterStatus is `cluster status`: a line on the cluster, a row per node (role, state, WAL
// positions, lags, sync state), the nodes' errors, then the listener, the modelled hosts,
// the links, the nodes' own hosts (network namespaces) and Patroni's view, each when the
// cluster has it.
func ClusterStatus(w io.Writer, st *status.Cluster) {
	fmt.Fprintf(w, "cluster %s · PostgreSQL %s · %s commit\n", st.Name, st.Version, st.Commit)
	tw := table.NewWriter(w, table.Left)
	fmt.Fprintln(tw, "NODE\tROLE\tPORT\tSTATE\tREADABLE\tCURRENT/RECEIVED\tREPLAYED\tWRITE LAG\tFLUSH LAG\tREPLAY LAG\tSYNC")
	for _, n := range st.Nodes {
		lsn := n.CurrentLSN
		if n.Role == status.RoleStandby {
			lsn = n.ReceivedLSN
		}
		state := n.State
		if n.ReplayPaused {
			state += " (replay paused)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.Name, n.Role, n.Port, state, yesNo(n.Readable),
			dash(lsn), dash(n.ReplayedLSN), lag(n.WriteLagBytes, n.WriteLagSec), lag(n.FlushLagBytes, n.FlushLagSec),
			lag(n.ReplayLagBytes, n.ReplayLagSec), dash(n.SyncState))
	}
	tw.Flush()
	for _, n := range st.Nodes {
		if n.Error != "" {
			fmt.Fprintf(w, "%s: %s\n", n.Name, n.Error)
		}
	}
	if st.Listener != nil {
		fmt.Fprintln(w, ListenerLine(st.Listener, st.ListenerRunning))
	}
	clusterHosts(w, st)
	if st.Links != nil {
		fmt.Fprintln(w, "links:", st.Links)
	}
	clusterNetns(w, st)
	clusterPatroni(w, st)
}

// clusterNetns shows, for a cluster whose nodes are hosts of their own, the subnet and each
// node's address, namespace and exporter.
func clusterNetns(w io.Writer, st *status.Cluster) {
	if st.Netns == nil {
		return
	}
	fmt.Fprintln(w, "network:", st.Netns)
	for _, n := range st.Nodes {
		h := n.OwnHost
		if h == nil {
			continue
		}
		exp := "exporter not started"
		if h.Exporter != "" {
			exp = "exporter " + h.Exporter
			if h.ExporterRunning {
				exp += fmt.Sprintf(" · running (pid %d)", h.ExporterPID)
			} else {
				exp += " · not running"
			}
		}
		fmt.Fprintf(w, "  %s: %s · namespace %s · %s\n", n.Name, net.JoinHostPort(n.Host, strconv.Itoa(n.Port)), h.Namespace, exp)
	}
}

// ListenerLine is the listener's line in `cluster status`: its addresses as the topology
// records them, and whether its process runs.
func ListenerLine(li *status.ListenerInfo, running bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "listener: %s", li.Listen)
	if li.ReadOnlyListen != "" {
		fmt.Fprintf(&b, ", read-only port %s", li.ReadOnlyListen)
	}
	if li.Metrics != "" {
		fmt.Fprintf(&b, ", metrics http://%s/metrics", li.Metrics)
	}
	if running {
		fmt.Fprintf(&b, " · running (pid %d)", li.PID)
	} else {
		b.WriteString(" · not running")
	}
	if li.LogFile != "" {
		fmt.Fprintf(&b, " · log %s", li.LogFile)
	}
	return b.String()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func lag(bytes *int64, sec *float64) string {
	if bytes == nil {
		return "-"
	}
	s := units.FormatBytes(*bytes)
	if sec != nil {
		s += fmt.Sprintf(" / %.3fs", *sec)
	}
	return s
}

// clusterPatroni shows Patroni's settings and its view of the members (GET /cluster), under
// the node table, when Patroni runs the cluster.
func clusterPatroni(w io.Writer, st *status.Cluster) {
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

// ClusterList is `cluster list`: a row per cluster under home, or a line saying there are
// none.
func ClusterList(w io.Writer, home string, clusters []status.Summary) error {
	if len(clusters) == 0 {
		_, err := fmt.Fprintf(w, "no clusters under %s\n", home)
		return err
	}
	tw := table.NewWriter(w, table.Left)
	fmt.Fprintln(tw, "NAME\tPOSTGRES\tCOMMIT\tPRIMARY\tNODES\tRUNNING")
	for _, c := range clusters {
		if c.Error != "" {
			fmt.Fprintf(tw, "%s\t?\t?\t?\t?\t%s\n", c.Name, c.Error)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s (%s:%d)\t%d\t%d\n", c.Name, c.Version, c.Commit, c.Primary, c.Host, c.Port, c.Nodes, c.Running)
	}
	return tw.Flush()
}

// ShellExports writes one `export NAME=value` line per pair, each value quoted for a POSIX
// shell where it needs it, for `eval "$(agbench cluster env)"`.
func ShellExports(w io.Writer, env [][2]string) {
	for _, kv := range env {
		fmt.Fprintf(w, "export %s=%s\n", kv[0], exportQuote(kv[1]))
	}
}

// exportQuote leaves a value of path-like characters bare and single-quotes anything else.
func exportQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == ':' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
