package render

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/status"
)

// The listener's line names only the ports it has, and its pid only while it runs.
func TestListenerLine(t *testing.T) {
	for _, c := range []struct {
		li      status.ListenerInfo
		running bool
		want    string
	}{
		{status.ListenerInfo{Listen: "127.0.0.1:6432", ReadOnlyListen: "127.0.0.1:6433", Metrics: "127.0.0.1:6434", PID: 42, LogFile: "/h/listener.log"}, true,
			"listener: 127.0.0.1:6432, read-only port 127.0.0.1:6433, metrics http://127.0.0.1:6434/metrics · running (pid 42) · log /h/listener.log"},
		{status.ListenerInfo{Listen: "127.0.0.1:6432", PID: 42}, false, "listener: 127.0.0.1:6432 · not running"},
	} {
		if got := ListenerLine(&c.li, c.running); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}

// cluster status of a cluster with everything (listener, modelled hosts with IO limits
// under v1, links, Patroni paused), of one with nothing but Patroni unread, and of
// lifted and v2 budgets: testdata/cluster-status-*.txt were printed by the command's own
// printer before it moved here.
func TestClusterStatusGolden(t *testing.T) {
	fx := statusFixtures()
	var names []string
	for n := range fx {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		var b bytes.Buffer
		ClusterStatus(&b, fx[n])
		checkGolden(t, "cluster-status-"+n, b.String())
	}
}

func statusFixtures() map[string]*status.Cluster {
	i64 := func(v int64) *int64 { return &v }
	f64 := func(v float64) *float64 { return &v }
	at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	nodes := []status.Node{
		{Name: "primary", Role: "primary", Host: "127.0.0.1", Port: 6500, State: "running", Readable: true, CurrentLSN: "0/3000148",
			Budget: &status.HostUse{Group: "agbench-lab-primary", CPUs: 0.5, CPUSet: "0", Memory: 512 << 20, Processes: 9, Cores: 0.25,
				ThrottledShare: f64(0.125), Used: 300 << 20, Cache: 100 << 20, IO: &status.Budget{ReadBPS: 20 << 20, ReadIOPS: 500, WriteBPS: 10 << 20},
				IOUse: &status.IORates{ReadBPS: 5 << 20, ReadIOPS: 100, WriteBPS: 1 << 20, WriteIOPS: 12}, Neighbours: []string{"agbench-other-primary"}}},
		{Name: "standby1", Role: "standby", Host: "127.0.0.1", Port: 6501, State: "streaming", Readable: true, InRecovery: true,
			ReceivedLSN: "0/3000148", ReplayedLSN: "0/3000100", WriteLagBytes: i64(0), FlushLagBytes: i64(0), ReplayLagBytes: i64(72),
			WriteLagSec: f64(0.0012), FlushLagSec: f64(0.0021), ReplayLagSec: f64(0.0031), SyncState: "sync", ReplayPaused: true,
			Budget: &status.HostUse{Group: "agbench-lab-standby1", CPUs: 0.5, CPUSet: "1", Memory: 512 << 20, Error: "read cpu.stat: gone",
				IO: &status.Budget{ReadBPS: 20 << 20, ReadIOPS: 500, WriteBPS: 10 << 20}}},
		{Name: "standby2", Role: "standby", Host: "127.0.0.1", Port: 6502, State: "unreachable", Error: "dial tcp 127.0.0.1:6502: connection refused"},
	}
	full := &status.Cluster{Name: "lab", Commit: "sync", Version: "15.8", Dir: "/h/clusters/lab", Nodes: nodes, At: at,
		Listener: &status.ListenerInfo{Listen: "127.0.0.1:6432", ReadOnlyListen: "127.0.0.1:6433", Metrics: "127.0.0.1:6434", PID: 0, LogFile: "/h/clusters/lab/listener.log"},
		Hosts: &status.HostModel{Kind: "cgroup v1", Budget: status.Budget{CPUs: 0.5, CPUShares: 16384, Memory: 512 << 20, ReadBPS: 20 << 20, ReadIOPS: 500, WriteBPS: 10 << 20},
			IODevice: &status.Device{Major: 254, Minor: 0, Name: "vda"}, MachineCPUs: 2},
		Links:   &status.LinksInfo{Latency: status.Duration(500 * time.Microsecond), Bandwidth: 10 << 20, PID: 77},
		Patroni: &status.PatroniInfo{Scope: "lab", PatroniTiming: status.PatroniTiming{TTL: 30, LoopWait: 10, RetryTimeout: 10, SynchronousMode: true}, Etcd: status.EtcdInfo{ClientPort: 6540}},
		PatroniView: &status.PatroniView{From: "http://127.0.0.1:6530", Pause: true, Members: []status.PatroniMember{
			{Name: "primary", Role: "leader", State: "running", APIURL: "http://127.0.0.1:6530/patroni", Timeline: 2},
			{Name: "standby1", Role: "sync_standby", State: "streaming", APIURL: "http://127.0.0.1:6531/patroni", Timeline: 2, RawLag: json.RawMessage("4096")},
			{Name: "standby2", Role: "replica", State: "stopped", APIURL: "http://127.0.0.1:6532/patroni", RawLag: json.RawMessage(`"unknown"`)}}}}
	plain := &status.Cluster{Name: "p", Commit: "async", Version: "16.2", Nodes: nodes[:2], At: at,
		Patroni:     &status.PatroniInfo{Scope: "p", PatroniTiming: status.PatroniTiming{TTL: 30, LoopWait: 10, RetryTimeout: 10}, Etcd: status.EtcdInfo{ClientPort: 6640}},
		PatroniView: &status.PatroniView{Error: "GET http://127.0.0.1:6630/cluster: connection refused"}}
	plain.Nodes = []status.Node{nodes[0], nodes[1]}
	plain.Nodes[0].Budget, plain.Nodes[1].Budget = nil, nil
	lifted := &status.Cluster{Name: "l", Commit: "async", Version: "15.8", Nodes: nodes, At: at,
		Hosts:   &status.HostModel{Kind: "cgroup v2", Budget: status.Budget{CPUs: 1.5, Memory: 1 << 30, WriteIOPS: 300}, IODevice: &status.Device{Major: 8, Minor: 0, Name: "sda"}, MachineCPUs: 4, Lifted: true},
		Patroni: &status.PatroniInfo{Scope: "l", PatroniTiming: status.PatroniTiming{TTL: 30, LoopWait: 10, RetryTimeout: 10}, Etcd: status.EtcdInfo{ClientPort: 6740}}}
	v2 := *lifted
	v2.Name, v2.Hosts = "v2", &status.HostModel{Kind: "cgroup v2", Budget: status.Budget{CPUs: 1.5, Memory: 1 << 30, WriteIOPS: 300}, IODevice: &status.Device{Major: 8, Minor: 0, Name: "sda"}, MachineCPUs: 4}
	v2.Patroni = nil
	return map[string]*status.Cluster{"full": full, "plain": plain, "lifted": lifted, "v2": v2ptr(&v2)}
}

func v2ptr(s *status.Cluster) *status.Cluster { return s }

// The listener's banner: its ports, routing, consistency when not the default, and a row
// per backend whose lag is "–" where it was not measured.
func TestListenerBanner(t *testing.T) {
	lagged := 2.345
	var b bytes.Buffer
	ListenerBanner(&b, status.ListenerState{Addr: "127.0.0.1:6432", MetricsAddr: "127.0.0.1:6434", Routing: true,
		RoutingList: "(('standby1','standby2'),'primary')", RoutingLists: map[string]string{"standby1": "('primary')"},
		Consistency: "session", CausalWait: time.Second, ConsistencyShown: true, MaxLag: 5 * time.Second, Forwarding: "user (no CAP_BPF)",
		Nodes: []status.ListenerNode{{Name: "primary", Addr: "127.0.0.1:6500", Up: true, Role: "primary", LagUnknown: "not a standby (primary)"},
			{Name: "standby1", Addr: "127.0.0.1:6501", Up: true, Role: "standby", LagSeconds: &lagged},
			{Name: "standby2", Addr: "127.0.0.1:6502", Role: "down", Error: "connection refused", LagUnknown: "down"}}})
	want := `agbench listener on 127.0.0.1:6432, metrics http://127.0.0.1:6434/metrics
routing list: (('standby1','standby2'),'primary')
routing list while standby1 is primary: ('primary')
consistency: session (causal wait 1s)
max lag: 5s
forwarding after startup: user (no CAP_BPF)
NODE      ADDRESS         ROLE     UP                      LAG
primary   127.0.0.1:6500  primary  yes                     –
standby1  127.0.0.1:6501  standby  yes                     2.3s
standby2  127.0.0.1:6502  down     no: connection refused  –
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	ListenerBanner(&b, status.ListenerState{Addr: "127.0.0.1:6432", ReadOnlyAddr: "127.0.0.1:6433", Forwarding: "kernel"})
	if got := b.String(); !strings.HasPrefix(got, "agbench listener on 127.0.0.1:6432, read-only port 127.0.0.1:6433\nrouting: off (read intent goes to the primary)\nforwarding after startup: kernel\n") {
		t.Errorf("routing off:\n%s", got)
	}
}

func TestListenerLagCell(t *testing.T) {
	lag := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		n    status.ListenerNode
		want string
	}{
		{status.ListenerNode{Up: true, Role: "standby", LagSeconds: lag(0)}, "0.0s"},
		{status.ListenerNode{Up: true, Role: "standby", LagSeconds: lag(2.345)}, "2.3s"},
		{status.ListenerNode{Up: true, Role: "standby", LagUnknown: "no primary's WAL position seen yet"}, "– (no primary's WAL position seen yet)"},
		{status.ListenerNode{Up: true, Role: "primary", LagUnknown: "not a standby (primary)"}, "–"},
		{status.ListenerNode{Up: false, Role: "down", LagUnknown: "down"}, "–"},
	} {
		if got := lagCell(c.n); got != c.want {
			t.Errorf("lagCell(%+v) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestClusterList(t *testing.T) {
	var b bytes.Buffer
	if err := ClusterList(&b, "/h", nil); err != nil || b.String() != "no clusters under /h\n" {
		t.Fatalf("%q %v", b.String(), err)
	}
	b.Reset()
	err := ClusterList(&b, "/h", []status.Summary{
		{Name: "lab", Version: "15.8", Commit: "sync", Primary: "standby1", Host: "127.0.0.1", Port: 6501, Nodes: 3, Running: 2},
		{Name: "torn", Error: "topology.json: unexpected end of JSON input"}})
	want := "NAME  POSTGRES  COMMIT  PRIMARY                    NODES  RUNNING\n" +
		"lab   15.8      sync    standby1 (127.0.0.1:6501)  3      2\n" +
		"torn  ?         ?       ?                          ?      topology.json: unexpected end of JSON input\n"
	if err != nil || b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// Values of path-like characters go bare; anything else is single-quoted, its quotes
// escaped, so that eval gives back the value.
func TestShellExports(t *testing.T) {
	var b bytes.Buffer
	ShellExports(&b, [][2]string{{"PGHOST", "127.0.0.1"}, {"PGPORT", "6500"}, {"PGUSER", ""}, {"PGPASSFILE", "/h/it's here/pgpass"}, {"X", "a=b"}})
	want := "export PGHOST=127.0.0.1\nexport PGPORT=6500\nexport PGUSER=''\nexport PGPASSFILE='/h/it'\\''s here/pgpass'\nexport X='a=b'\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
