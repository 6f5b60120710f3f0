package plan

import (
	"slices"
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/agerr"
)

func TestClusterHostsLinksAndRoutingList(t *testing.T) {
	p, err := Parse("h.yaml", []byte(`
target:
  cluster:
    name: h
    host_cpus: 0.6
    host_memory: 512M
    link_latency: 0.5ms
    routing_list: "(('standby1','primary'))"
experiments: [{command: stress}]
`))
	if err != nil {
		t.Fatal(err)
	}
	args := p.Target.Cluster.CreateArgs()
	for _, want := range []string{"--host-cpus=0.6", "--host-memory=512M", "--link-latency=0.5ms", "--routing-list=(('standby1','primary'))"} {
		if !slices.Contains(args, want) {
			t.Errorf("create args %v lack %s", args, want)
		}
	}
	if s := p.Target.Summary(); !strings.Contains(s, "modelled host (cpus 0.6 memory 512M)") || !strings.Contains(s, "0.5ms latency") {
		t.Errorf("summary %q", s)
	}
	for field, bad := range map[string]string{"host_cpus": "lots", "host_memory": "big", "link_latency": "soon"} {
		_, err := Parse("h.yaml", []byte("target:\n  cluster:\n    "+field+": "+bad+"\nexperiments: [{command: stress}]\n"))
		if !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "target.cluster."+field) {
			t.Errorf("%s: %v", field, err)
		}
	}
}
