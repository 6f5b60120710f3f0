package cluster

import "github.com/agbench/agbench/internal/netns"

// Children lists the pids whose parent is pid, for the external tests (crash.go's reader).
var Children = children

// WaitReplayedTo is WaitCaughtUp's wait for one standby, for the external tests.
var WaitReplayedTo = (*Topology).waitReplayedTo

// NetnsLeft lists what of the cluster's network namespaces is still on the machine, found
// by name as destroy finds it: its namespaces, and its bridge and veths.
func NetnsLeft(t *Topology) (namespaces, links []string, err error) {
	if namespaces, err = netns.List(t.groupPrefix()); err != nil {
		return nil, nil, err
	}
	links, err = netns.Links(t.netnsID())
	return namespaces, links, err
}
