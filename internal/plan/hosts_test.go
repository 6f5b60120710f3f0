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
    host_cpu_shares: auto
    host_read_bps: 20M
    host_write_iops: 400
    link_latency: 0.5ms
    link_bandwidth: 10M
    routing_list: "(('standby1','primary'))"
experiments: [{command: stress}]
`))
	if err != nil {
		t.Fatal(err)
	}
	args := p.Target.Cluster.CreateArgs()
	for _, want := range []string{"--host-cpus=0.6", "--host-memory=512M", "--link-latency=0.5ms", "--routing-list=(('standby1','primary'))",
		"--host-cpu-shares=auto", "--host-read-bps=20M", "--host-write-iops=400", "--link-bandwidth=10M"} {
		if !slices.Contains(args, want) {
			t.Errorf("create args %v lack %s", args, want)
		}
	}
	if s := p.Target.Summary(); !strings.Contains(s, "modelled host (cpus 0.6 cpu shares auto memory 512M read B/s 20M write IOPS 400)") || !strings.Contains(s, "0.5ms latency") {
		t.Errorf("summary %q", s)
	}
	// What cluster create's flags refuse, the plan refuses (0.5us is below
	// --link-latency's 1us, 1.5G is no whole size for --host-memory).
	for _, c := range []struct{ field, bad string }{{"host_cpus", "lots"}, {"host_cpus", "Inf"}, {"host_memory", "big"}, {"host_memory", "1.5G"},
		{"host_memory", "0"}, {"link_latency", "soon"}, {"link_latency", "0.5us"}, {"link_latency", "1h"},
		{"host_cpu_shares", "lots"}, {"host_cpu_shares", "1"}, {"host_read_bps", "fast"}, {"host_write_bps", "100"},
		{"host_read_iops", "1.5"}, {"host_write_iops", "5"}, {"link_bandwidth", "10"}} {
		_, err := Parse("h.yaml", []byte("target:\n  cluster:\n    "+c.field+": "+c.bad+"\nexperiments: [{command: stress}]\n"))
		if !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "target.cluster."+c.field) {
			t.Errorf("%s %s: %v", c.field, c.bad, err)
		}
	}
}
