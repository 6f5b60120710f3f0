package render

import (
	"fmt"
	"strings"
)

// Listener is what `cluster status` shows of the cluster's listener: its addresses as the
// topology records them, and whether its process runs (which the command checks, since
// render reads no process table).
type Listener struct {
	Listen, ReadOnlyListen, Metrics string
	PID                             int
	Running                         bool
	LogFile                         string
}

// ListenerLine is the listener's line in `cluster status`.
func ListenerLine(li Listener) string {
	var b strings.Builder
	fmt.Fprintf(&b, "listener: %s", li.Listen)
	if li.ReadOnlyListen != "" {
		fmt.Fprintf(&b, ", read-only port %s", li.ReadOnlyListen)
	}
	if li.Metrics != "" {
		fmt.Fprintf(&b, ", metrics http://%s/metrics", li.Metrics)
	}
	if li.Running {
		fmt.Fprintf(&b, " · running (pid %d)", li.PID)
	} else {
		b.WriteString(" · not running")
	}
	if li.LogFile != "" {
		fmt.Fprintf(&b, " · log %s", li.LogFile)
	}
	return b.String()
}
