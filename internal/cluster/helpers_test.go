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
	if !(&ListenerInfo{PID: listener}).Running() || (&ListenerInfo{PID: links}).Running() || (&ListenerInfo{PID: other}).Running() {
		t.Error("ListenerInfo.Running: want only the listener's process")
	}
	if !(&LinksInfo{PID: links}).Running() || (&LinksInfo{PID: listener}).Running() || (&LinksInfo{PID: other}).Running() {
		t.Error("LinksInfo.Running: want only the links' process")
	}
	if (*ListenerInfo)(nil).Running() || (&LinksInfo{}).Running() || (&ListenerInfo{PID: 1 << 30}).Running() {
		t.Error("no record, no pid or a pid with no process runs")
	}
	topo := &Topology{Links: &LinksInfo{PID: other}}
	if topo.LinksAlive() {
		t.Error("LinksAlive of a pid that is not the links' process")
	}
}
