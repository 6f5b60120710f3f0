package cluster

import (
	"slices"

	"github.com/agbench/agbench/internal/proc"
)

// The background processes agbench starts for a cluster (its listener, its links) are known
// by the pid the topology records and by their command line: a pid whose process is gone
// may be reused by any other, which agbench must never signal.

// agbenchRuns reports whether pid is alive and its command line holds words in a row (the
// subcommand agbench started it with): a process of ours, not a reused pid.
func agbenchRuns(pid int, words ...string) bool {
	if pid <= 0 || !Alive(pid) {
		return false
	}
	args, err := proc.Cmdline(proc.Root, pid)
	if err != nil {
		return false
	}
	for i := range args {
		if i+len(words) <= len(args) && slices.Equal(args[i:i+len(words)], words) {
			return true
		}
	}
	return false
}

// listenerRunning reports whether the recorded listener process runs (`agbench listener
// --cluster`).
func listenerRunning(li *ListenerInfo) bool {
	return li != nil && agbenchRuns(li.PID, "listener", "--cluster")
}

// linksRunning reports whether the recorded links process runs (`agbench cluster links`).
func linksRunning(l *LinksInfo) bool {
	return l != nil && agbenchRuns(l.PID, "cluster", "links")
}
