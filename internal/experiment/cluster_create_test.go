package experiment

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cgroup"
	"github.com/agbench/agbench/internal/plan"
)

// A plan's cluster target becomes the options cluster create's flags make: every field,
// the values derived from text (budgets, links, the listener's ports) and the binary that
// serves the links and the listener.
func TestClusterOptionsOfAPlan(t *testing.T) {
	t.Parallel()
	p, err := plan.Parse("c.yaml", []byte(`target:
  cluster:
    name: c
    standbys: 2
    commit: sync
    base_port: 7100
    listener: 127.0.0.1:7120
    settings: {fsync: "off", shared_buffers: 64MB}
    host_cpus: 0.6
    host_memory: 512M
    host_read_iops: 400
    link_latency: 0.5ms
    link_bandwidth: 10M
    routing_list: "(('standby2','standby1'),'primary')"
experiments: [{command: stress}]
`))
	if err != nil {
		t.Fatal(err)
	}
	o, err := ClusterOptions(p.Target.Cluster, "/home/x", func() (string, error) { return "/bin/agbench", nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.Home != "/home/x" || o.Name != "c" || o.Standbys != 2 || o.Commit != "sync" || o.BasePort != 7100 ||
		!slices.Equal(o.Settings, []string{"fsync=off", "shared_buffers=64MB"}) || o.Agbench != "/bin/agbench" {
		t.Errorf("options %+v", o)
	}
	if o.Host.CPUs != 0.6 || o.Host.Memory != 512<<20 || o.Host.ReadIOPS != 400 || o.Host.CPUShares != cgroup.AutoCPUShares {
		t.Errorf("host %+v", o.Host)
	}
	if o.LinkLatency != 500*time.Microsecond || o.LinkBandwidth != 10<<20 {
		t.Errorf("links %v %d", o.LinkLatency, o.LinkBandwidth)
	}
	if l := o.Listener; l == nil || l.Listen != "127.0.0.1:7120" || l.ReadOnlyListen != "127.0.0.1:7121" || l.Metrics != "127.0.0.1:7122" ||
		l.RoutingList != o.RoutingList || o.RoutingList != "(('standby2','standby1'),'primary')" {
		t.Errorf("listener %+v, routing list %q", o.Listener, o.RoutingList)
	}
}

// The binary is asked for only when something runs in the background, and a routing list
// that names no node of the cluster is bad input naming the flag, as the command says it.
func TestClusterOptionsChecks(t *testing.T) {
	t.Parallel()
	asked := false
	self := func() (string, error) { asked = true; return "", errors.New("no binary") }
	o, err := ClusterOptions(&plan.Cluster{Name: "plain", Standbys: 1, Commit: "async", BasePort: 7200}, "h", self, nil)
	if err != nil || asked || o.Listener != nil || o.Agbench != "" {
		t.Errorf("plain cluster: %+v %v (binary asked: %v)", o, err, asked)
	}
	_, err = ClusterOptions(&plan.Cluster{Name: "l", Standbys: 1, Commit: "async", BasePort: 7200, LinkLatency: "1ms"}, "h", self, nil)
	if err == nil || !asked || err.Error() != "no binary" {
		t.Errorf("links without a binary: %v (asked: %v)", err, asked)
	}
	_, err = ClusterOptions(&plan.Cluster{Name: "r", Standbys: 1, Commit: "async", BasePort: 7200, RoutingList: "(('standby5'))"}, "h", self, nil)
	if !agerr.IsBadInput(err) || !strings.HasPrefix(err.Error(), "--routing-list: ") || !strings.Contains(err.Error(), "standby5") {
		t.Errorf("bad routing list: %v", err)
	}
}
