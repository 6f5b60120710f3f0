package cluster

import (
	"os/exec"
	"testing"
)

// A recorded listener or links pid counts as running only while its process is agbench's
// listener or links: a live process of another command line (a reused pid) does not.
func TestBackgroundProcessesKnownByTheirCommandLine(t *testing.T) {
	start := func(args ...string) int {
		c := &exec.Cmd{Path: "/bin/sh", Args: append([]string{"agbench", "-c", "sleep 60; true"}, args...)}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		return c.Process.Pid
	}
	listener, links, other := start("listener", "--cluster", "t"), start("cluster", "links", "--name", "t"), start("cluster", "status")
	if !listenerRunning(&ListenerInfo{PID: listener}) || listenerRunning(&ListenerInfo{PID: links}) || listenerRunning(&ListenerInfo{PID: other}) {
		t.Error("listenerRunning: want only the listener's process")
	}
	if !linksRunning(&LinksInfo{PID: links}) || linksRunning(&LinksInfo{PID: listener}) || linksRunning(&LinksInfo{PID: other}) {
		t.Error("linksRunning: want only the links' process")
	}
	if listenerRunning(nil) || linksRunning(&LinksInfo{}) || listenerRunning(&ListenerInfo{PID: 1 << 30}) {
		t.Error("no record, no pid or a pid with no process runs")
	}
	topo := &Topology{Links: &LinksInfo{PID: other}, Listener: &ListenerInfo{PID: other}}
	if topo.LinksAlive() || topo.ListenerAlive() {
		t.Error("LinksAlive or ListenerAlive of a pid that is not their process")
	}
	if topo.Listener.PID = listener; !topo.ListenerAlive() {
		t.Error("ListenerAlive of the listener's process")
	}
}
