package plan

import (
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agbench/agbench/internal/cgroup"
	"github.com/agbench/agbench/internal/links"
	"github.com/agbench/agbench/internal/units"
)

// cluster reads target.cluster: its shape, its servers' settings, the modelled hosts and
// the links, each value checked as the cluster create flag of its name checks it.
func (p *parser) cluster(n *yaml.Node) *Cluster {
	c := &Cluster{Name: "study", Standbys: 1, Commit: DefaultCommit, BasePort: DefaultBasePort}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return c
	}
	if !p.mapping(n, "target.cluster") {
		return c
	}
	fields := map[string]func(*yaml.Node){
		"settings":     func(v *yaml.Node) { c.Settings = p.settings(v) },
		"routing_list": p.text(&c.RoutingList, "routing_list", nil),
		"keep":         func(v *yaml.Node) { c.Keep, _ = p.boolean(v, "target.cluster.keep") },
		"reuse":        func(v *yaml.Node) { c.Reuse, _ = p.boolean(v, "target.cluster.reuse") },
		"netns":        func(v *yaml.Node) { c.Netns, _ = p.boolean(v, "target.cluster.netns") },
	}
	maps.Copy(fields, p.shapeFields(c))
	maps.Copy(fields, p.hostFields(c))
	p.fields(n, "target.cluster", fields)
	return c
}

// shapeFields read the cluster's name, nodes, commit mode, ports and listener.
func (p *parser) shapeFields(c *Cluster) map[string]func(*yaml.Node) {
	return map[string]func(*yaml.Node){
		"name": p.text(&c.Name, "name", func(what, s string) string {
			if !nameRE.MatchString(s) {
				return fmt.Sprintf("%s %q: use letters, digits, '.', '_' and '-'", what, s)
			}
			return ""
		}),
		"standbys": p.whole(&c.Standbys, "standbys", 0, MaxStandbys, "give 0 to %[2]d"),
		"commit": p.text(&c.Commit, "commit", func(what, s string) string {
			if s != "sync" && s != "async" {
				return fmt.Sprintf("%s %q: give sync or async", what, s)
			}
			return ""
		}),
		"base_port": p.whole(&c.BasePort, "base_port", 1024, 65535-MaxStandbys-3, "give a port from %[1]d to %[2]d"),
		"listener": func(v *yaml.Node) {
			if v.Kind == yaml.ScalarNode && v.Tag == "!!bool" {
				if b, _ := strconv.ParseBool(v.Value); b {
					c.Listener = "127.0.0.1:6432"
				}
				return
			}
			p.text(&c.Listener, "listener", func(what, s string) string {
				if _, port, found := strings.Cut(s, ":"); !found || port == "" {
					return fmt.Sprintf("%s %q: give true or an address host:port", what, s)
				}
				return ""
			})(v)
		},
	}
}

// hostFields read the modelled host of each node (cluster create --host-*) and the links
// in front of the nodes (--link-*), with the parsers those flags use.
func (p *parser) hostFields(c *Cluster) map[string]func(*yaml.Node) {
	limit := func(parse func(flag, s string) (int64, error)) func(what, s string) string {
		return func(what, s string) string { _, err := parse(what, s); return errText(err) }
	}
	return map[string]func(*yaml.Node){
		"host_cpus": p.text(&c.HostCPUs, "host_cpus", func(what, s string) string {
			if x, err := strconv.ParseFloat(s, 64); err != nil || !(x > 0) || math.IsInf(x, 0) {
				return fmt.Sprintf("%s %q: give each node's CPU budget in cores, e.g. 0.6", what, s)
			}
			return ""
		}),
		"host_memory": p.text(&c.HostMemory, "host_memory", func(what, s string) string {
			if n, err := units.ParseBytes(s); err != nil || n <= 0 {
				return fmt.Sprintf("%s %q: give each node's memory budget, e.g. 512M or 1G", what, s)
			}
			return ""
		}),
		"host_cpu_shares": p.text(&c.HostCPUShares, "host_cpu_shares", func(what, s string) string {
			_, err := cgroup.ParseCPUShares(what, s)
			return errText(err)
		}),
		"host_read_bps":   p.text(&c.HostReadBPS, "host_read_bps", limit(cgroup.ParseBPS)),
		"host_write_bps":  p.text(&c.HostWriteBPS, "host_write_bps", limit(cgroup.ParseBPS)),
		"host_read_iops":  p.text(&c.HostReadIOPS, "host_read_iops", limit(cgroup.ParseIOPS)),
		"host_write_iops": p.text(&c.HostWriteIOPS, "host_write_iops", limit(cgroup.ParseIOPS)),
		"link_latency": p.text(&c.LinkLatency, "link_latency", func(what, s string) string {
			if _, err := links.ParseLatency(s); err != nil {
				return fmt.Sprintf("%s %q: give a duration from 1us to %v, e.g. 0.5ms", what, s, links.MaxLatency)
			}
			return ""
		}),
		"link_bandwidth": p.text(&c.LinkBandwidth, "link_bandwidth", func(what, s string) string {
			_, err := links.ParseBandwidth(what, s)
			return errText(err)
		}),
	}
}

// settings reads target.cluster.settings: server settings in the file's order.
func (p *parser) settings(v *yaml.Node) []Setting {
	if !p.mapping(v, "target.cluster.settings") {
		return nil
	}
	var out []Setting
	seen := map[string]bool{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		switch {
		case k.Kind != yaml.ScalarNode || k.Value == "":
			p.errorf(k, "target.cluster.settings: a key must be a setting's name")
		case seen[k.Value]:
			p.errorf(k, "target.cluster.settings: %q given twice", k.Value)
		case val.Kind != yaml.ScalarNode || val.Tag == "!!null":
			seen[k.Value] = true
			p.errorf(val, "target.cluster.settings.%s: give one value, not %s", k.Value, kindName(val))
		default:
			seen[k.Value] = true
			out = append(out, Setting{Key: k.Value, Value: val.Value})
		}
	}
	return out
}

// text reads a text field of target.cluster into to; bad says what is wrong with a value
// ("" when nothing is; nil checks nothing). The value is kept either way.
func (p *parser) text(to *string, field string, bad func(what, s string) string) func(*yaml.Node) {
	return func(v *yaml.Node) {
		what := "target.cluster." + field
		if s, ok := p.str(v, what); ok {
			if bad != nil {
				if msg := bad(what, s); msg != "" {
					p.errorf(v, "%s", msg)
				}
			}
			*to = s
		}
	}
}

// whole reads a whole-number field of target.cluster into to, from lo to hi; outside,
// the message is "<field> <value>: " and hint (formatted with lo and hi).
func (p *parser) whole(to *int, field string, lo, hi int, hint string) func(*yaml.Node) {
	return func(v *yaml.Node) {
		what := "target.cluster." + field
		if x, ok := p.integer(v, what); ok {
			if x < lo || x > hi {
				p.errorf(v, "%s %d: %s", what, x, fmt.Sprintf(hint, lo, hi))
			}
			*to = x
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
