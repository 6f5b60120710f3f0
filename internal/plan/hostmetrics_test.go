package plan

import (
	"slices"
	"strings"
	"testing"
)

func TestHostMetricsBecomeFlags(t *testing.T) {
	p, err := Parse("m.yaml", []byte(`
target:
  connect: {primary: "host=db1", standbys: ["host=db2"]}
  host_metrics:
    node_exporter: {primary: "http://db1:9100", standby1: "http://db2:9100"}
experiments:
  - {command: stress}
  - {command: stress, name: own, flags: {host-metrics: ["primary=http://x:9100"]}}
  - {command: disk}
`))
	if err != nil {
		t.Fatal(err)
	}
	has := func(string) bool { return true }
	args := p.Args(0, "s", "r", has)
	for _, want := range []string{"--host-metrics=primary=http://db1:9100", "--host-metrics=standby1=http://db2:9100"} {
		if !slices.Contains(args, want) {
			t.Errorf("args %v lack %s", args, want)
		}
	}
	if args := p.Args(1, "s", "r", has); strings.Count(strings.Join(args, " "), "--host-metrics") != 1 || !slices.Contains(args, "--host-metrics=primary=http://x:9100") {
		t.Errorf("an experiment's own --host-metrics: %v", args)
	}
	if args := p.Args(2, "s", "r", func(f string) bool { return f == "results" }); strings.Contains(strings.Join(args, " "), "host-metrics") {
		t.Errorf("a command without the flag got it: %v", args)
	}

	p, err = Parse("m.yaml", []byte(`
target:
  cluster: {name: c}
  host_metrics: {prometheus: "http://prom:9090", label: nodename, instances: {primary: db1}}
experiments: [{command: tpcc run}]
`))
	if err != nil {
		t.Fatal(err)
	}
	args = p.Args(0, "s", "r", func(string) bool { return true })
	for _, want := range []string{"--prometheus=http://prom:9090", "--prometheus-label=nodename", "--prometheus-instance=primary=db1"} {
		if !slices.Contains(args, want) {
			t.Errorf("args %v lack %s", args, want)
		}
	}
}

func TestHostMetricsErrors(t *testing.T) {
	exp := "experiments: [{command: stress}]\n"
	for _, c := range []struct{ yaml, want string }{
		{"target: {connect: {primary: p}, host_metrics: {node_exporter: {a: u, a: v}}}\n", "node a named twice"},
		{"target: {connect: {primary: p}, host_metrics: {instances: {a: i}}}\n", "label and instances need prometheus"},
		{"target: {connect: {primary: p}, host_metrics: {}}\n", "give node_exporter (a URL per node) or prometheus"},
		{"target: {connect: {primary: p}, host_metrics: {node_exporter: {a: ''}}}\n", "target.host_metrics.node_exporter.a: give the URL"},
		{"target: {connect: {primary: p}, host_metrics: {node_exporter: [u]}}\n", "target.host_metrics.node_exporter must be a mapping"},
		{"target: {connect: {primary: p}, host_metrics: {exporters: {a: u}}}\n", `unknown key "exporters"`},
		{"target: {cluster: {standbys: 1}, host_metrics: {node_exporter: {nosuch: u}}}\n", "target.host_metrics.node_exporter: the cluster has no node nosuch (its nodes: primary, standby1)"},
		{"target: {host_metrics: {prometheus: u, instances: {standby2: i}}, cluster: {standbys: 1}}\n", "target.host_metrics.instances: the cluster has no node standby2"},
	} {
		_, err := Parse("e.yaml", []byte(c.yaml+exp))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "e.yaml:1:") {
			t.Errorf("%s: %v; want %q with a position", c.yaml, err, c.want)
		}
	}
}

// target.cluster.netns is cluster create --netns.
func TestClusterNetns(t *testing.T) {
	for _, c := range []struct {
		yaml string
		want bool
	}{{"{netns: true}", true}, {"{netns: false}", false}, {"{}", false}} {
		p, err := Parse("n.yaml", []byte("target: {cluster: "+c.yaml+"}\nexperiments: [{command: stress}]\n"))
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(p.Target.Cluster.CreateArgs(), "--netns"); got != c.want {
			t.Errorf("%s: create args %v", c.yaml, p.Target.Cluster.CreateArgs())
		}
	}
	if _, err := Parse("n.yaml", []byte("target: {cluster: {netns: 1}}\nexperiments: [{command: stress}]\n")); err == nil || !strings.Contains(err.Error(), "target.cluster.netns: give true or false") {
		t.Errorf("netns: 1: %v", err)
	}
}
