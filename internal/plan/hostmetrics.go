package plan

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// HostMetrics says where the host figures of the target's nodes come from when they run on
// other hosts (target.host_metrics): each node's node_exporter, or a Prometheus server that
// scrapes them. Every experiment whose command reads hosts gets them as flags
// (--host-metrics, --prometheus, --prometheus-label, --prometheus-instance) unless it sets
// one of those itself.
type HostMetrics struct {
	// Exporters are NODE=URL, in the file's order.
	Exporters []Setting
	// Prometheus is the server's URL; Label the label that tells hosts apart ("" for the
	// command's default); Instances NODE=VALUE of that label, in the file's order.
	Prometheus, Label string
	Instances         []Setting
}

// hostMetricsFlags are the flags HostMetrics sets.
var hostMetricsFlags = []string{"host-metrics", "prometheus", "prometheus-label", "prometheus-instance"}

// args are the flags HostMetrics sets on a command that has them.
func (h *HostMetrics) args() []string {
	var out []string
	for _, e := range h.Exporters {
		out = append(out, "--host-metrics="+e.Key+"="+e.Value)
	}
	if h.Prometheus != "" {
		out = append(out, "--prometheus="+h.Prometheus)
	}
	if h.Label != "" {
		out = append(out, "--prometheus-label="+h.Label)
	}
	for _, e := range h.Instances {
		out = append(out, "--prometheus-instance="+e.Key+"="+e.Value)
	}
	return out
}

// hostMetrics reads target.host_metrics:
//
//	host_metrics:
//	  node_exporter: {primary: "http://db1:9100", standby1: "http://db2:9100"}
//	  prometheus: "http://prom:9090"
//	  label: instance
//	  instances: {primary: "db1:9100"}
func (p *parser) hostMetrics(n *yaml.Node) *HostMetrics {
	const what = "target.host_metrics"
	h := &HostMetrics{}
	if !p.mapping(n, what) {
		return h
	}
	p.fields(n, what, map[string]func(*yaml.Node){
		"node_exporter": func(v *yaml.Node) {
			h.Exporters = p.nodeValues(v, what+".node_exporter", "the URL of the node_exporter on its host")
		},
		"prometheus": func(v *yaml.Node) { h.Prometheus, _ = p.str(v, what+".prometheus") },
		"label":      func(v *yaml.Node) { h.Label, _ = p.str(v, what+".label") },
		"instances": func(v *yaml.Node) {
			h.Instances = p.nodeValues(v, what+".instances", "the value of the label on its host's series")
		},
	})
	if h.Prometheus == "" && (h.Label != "" || len(h.Instances) > 0) {
		p.errorf(n, "%s: label and instances need prometheus (the server to ask)", what)
	}
	if h.Prometheus == "" && len(h.Exporters) == 0 {
		p.errorf(n, "%s: give node_exporter (a URL per node) or prometheus", what)
	}
	return h
}

// nodeValues reads a mapping of node names to text values.
func (p *parser) nodeValues(n *yaml.Node, what, value string) []Setting {
	if !p.mapping(n, what) {
		return nil
	}
	var out []Setting
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Value == "" {
			p.errorf(k, "%s: a key must be a node's name", what)
			continue
		}
		if seen[k.Value] {
			p.errorf(k, "%s: node %s named twice", what, k.Value)
			continue
		}
		seen[k.Value] = true
		if s, ok := p.str(v, what+"."+k.Value); ok {
			if s == "" {
				p.errorf(v, "%s.%s: give %s", what, k.Value, value)
				continue
			}
			out = append(out, Setting{Key: k.Value, Value: s})
		}
	}
	return out
}

// hostMetricsNodes checks that every node host_metrics names is one of the cluster's, so
// that a plan naming no such node fails its check before a cluster is made for it.
func (p *parser) hostMetricsNodes(n *yaml.Node, h *HostMetrics, names []string) {
	for _, m := range []struct {
		key string
		set []Setting
	}{{"node_exporter", h.Exporters}, {"instances", h.Instances}} {
		for _, s := range m.set {
			if !slices.Contains(names, s.Key) {
				p.errorf(n, "target.host_metrics.%s: the cluster has no node %s (its nodes: %s)", m.key, s.Key, strings.Join(names, ", "))
			}
		}
	}
}

// NodeNames are the names cluster create gives the cluster's nodes: primary, then
// standby1, standby2, … (the cluster package's CreatedNodeNames, which plan may not import).
func (c *Cluster) NodeNames() []string {
	names := []string{"primary"}
	for i := 1; i <= c.Standbys; i++ {
		names = append(names, fmt.Sprintf("standby%d", i))
	}
	return names
}
