package cluster

// Children lists the pids whose parent is pid, for the external tests (crash.go's reader).
var Children = children

// WaitReplayedTo is WaitCaughtUp's wait for one standby, for the external tests.
var WaitReplayedTo = (*Topology).waitReplayedTo
