package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/result"
)

// Two runs that differ in their host model, a server setting and a flag are named for each;
// what changes by nature from run to run (ports, result folders, seeds) is not; two runs
// set up alike give nothing.
func TestSetupDifferences(t *testing.T) {
	mk := func(hosts, sb, duration, port, results string) *result.Result {
		return &result.Result{Meta: result.Meta{ToolVersion: "v1", Host: result.Host{Hostname: "vm", Cores: 2},
			Server:   &result.Server{Version: "PostgreSQL 15", Settings: map[string]string{"shared_buffers": sb, "fsync": "on"}},
			Topology: &result.Topology{Cluster: "lab", Hosts: hosts, Listener: "127.0.0.1:" + port, Nodes: []result.Node{{Name: "primary", Role: "primary", Addr: "127.0.0.1:" + port}}},
			Config:   map[string]any{"duration": duration, "threads": "1,8", "results": results, "queries": []string{"SELECT 1"}}}}
	}
	a := mk("each node a modelled host: 0.6 cores", "32MB", "10s", "5001", "/tmp/a")
	b := mk("budgets lifted: …", "128MB", "45s", "6001", "/tmp/b")
	got := SetupDifferences(a, b)
	want := []string{"shared_buffers: A 32MB · B 128MB", "hosts: A each node a modelled host: 0.6 cores · B budgets lifted: …", "duration: A 10s · B 45s"}
	if !slices.Equal(got, want) {
		t.Fatalf("differences:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d := SetupDifferences(a, mk("each node a modelled host: 0.6 cores", "32MB", "10s", "7001", "/tmp/c")); len(d) != 0 {
		t.Fatalf("runs set up alike differ in %v", d)
	}
	a.Meta.Server = nil
	if d := SetupDifferences(a, b); !slices.Contains(d, "server: A (none) · B PostgreSQL 15") {
		t.Fatalf("a run without a server: %v", d)
	}
}
