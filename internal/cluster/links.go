package cluster

import (
	"net"
	"strconv"

	"github.com/agbench/agbench/internal/status"
)

// The links' record, and the duration it is written with (status.LinksInfo).
type (
	LinksInfo = status.LinksInfo
	Duration  = status.Duration
)

// linkPortOffset is where the links' ports start, above the nodes' base port.
const linkPortOffset = 20

// LinkSpec is one link as the links process serves it.
type LinkSpec struct {
	Name     string
	Listen   string
	Upstream string
}

// LinkSpecs lists the links of the cluster, one in front of each node.
func (t *Topology) LinkSpecs() []LinkSpec {
	if t.Links == nil {
		return nil
	}
	var out []LinkSpec
	for _, n := range t.Nodes {
		out = append(out, LinkSpec{Name: n.Name, Listen: net.JoinHostPort(n.ClientHost(), strconv.Itoa(n.LinkPort)),
			Upstream: net.JoinHostPort(n.Host, strconv.Itoa(n.Port))})
	}
	return out
}

// ClientPort is the port clients reach the node on: its link's when the cluster has links.
func (n *Node) ClientPort() int {
	if n.LinkPort > 0 {
		return n.LinkPort
	}
	return n.Port
}

// ClientHost is the host clients reach the node at: its link's when the cluster has links
// that listen elsewhere than the node (LinkHost).
func (n *Node) ClientHost() string {
	if n.LinkPort > 0 && n.LinkHost != "" {
		return n.LinkHost
	}
	return n.Host
}

// RelayHost is the address a relay in front of node n listens on (in this machine's root
// namespace) so that the other nodes reach it: the root namespace's address on the subnet
// of a cluster in namespaces, else the node's own (loopback).
func (t *Topology) RelayHost(n *Node) string {
	if t.Netns != nil && t.Netns.Gateway != "" {
		return t.Netns.Gateway
	}
	return n.Host
}

// ClientAddr is ClientHost:ClientPort.
func (n *Node) ClientAddr() string {
	return net.JoinHostPort(n.ClientHost(), strconv.Itoa(n.ClientPort()))
}

// LinksAlive reports whether the recorded links process runs (`agbench cluster links`).
func (t *Topology) LinksAlive() bool { return linksRunning(t.Links) }

// ListenerAlive reports whether the recorded listener process runs (`agbench listener
// --cluster`).
func (t *Topology) ListenerAlive() bool { return listenerRunning(t.Listener) }
