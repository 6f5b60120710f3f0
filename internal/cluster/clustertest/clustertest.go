// Package clustertest makes throwaway local clusters for integration tests: a primary and
// N hot standbys in a temporary folder on free loopback ports, always removed when the test
// ends (also when it fails). It must be imported by tests only.
//
// Imports from agbench: only internal/agerr, internal/cgroup, internal/cluster, internal/freeport,
// internal/pgbin.
package clustertest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cgroup"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/freeport"
	"github.com/agbench/agbench/internal/pgbin"
)

// Options shape a test cluster; the zero value is a lone primary, async.
type Options struct {
	Standbys int
	Commit   string // "" means async
	// Settings are extra server settings (key -> value). Tests get fsync=off unless they set it.
	Settings map[string]string
	// Name of the cluster; "" means "t".
	Name string
	// Host models each node as a host (needs root); zero is none.
	Host cgroup.Budget
	// HA "patroni" runs the cluster under Patroni (RequirePatroni first), with Patroni's
	// default timing.
	HA string
	// Netns puts each node in a network namespace of its own, with its own address and
	// node_exporter (RequireNetns first).
	Netns bool
}

// RequireNetns is Require, and skips the test when it cannot make network namespaces: not
// root, or ip, nsenter or Debian's node_exporter missing (a failure under
// AGBENCH_REQUIRE_PG=1 as root: `make test` installs them).
func RequireNetns(t testing.TB) {
	t.Helper()
	Require(t)
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	for _, bin := range []string{"ip", "nsenter", cluster.ExporterBinary} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("AGBENCH_REQUIRE_PG") == "1" {
				t.Fatalf("AGBENCH_REQUIRE_PG=1 but %s is not installed (scripts/install-deps.sh installs it)", bin)
			}
			t.Skipf("%s is not installed (apt-get install iproute2 util-linux prometheus-node-exporter)", bin)
		}
	}
}

// RequirePatroni is Require, and skips the test when Patroni or etcd is not installed
// (a failure under AGBENCH_REQUIRE_PG=1: `make test` installs them).
func RequirePatroni(t testing.TB) {
	t.Helper()
	Require(t)
	for _, bin := range []string{"patroni", "etcd"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("AGBENCH_REQUIRE_PG") == "1" {
				t.Fatalf("AGBENCH_REQUIRE_PG=1 but %s is not installed (scripts/install-deps.sh installs it)", bin)
			}
			t.Skipf("%s is not installed (apt-get install patroni etcd-server, or scripts/install-deps.sh)", bin)
		}
	}
}

// Require skips the test under -short, and when no PostgreSQL server binaries are installed
// (unless AGBENCH_REQUIRE_PG=1, as `make test` sets, which turns that into a failure).
func Require(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a PostgreSQL cluster; skipped with -short")
	}
	if _, err := pgbin.Find(context.Background(), os.Getenv("AGBENCH_PG_BIN")); err != nil {
		if os.Getenv("AGBENCH_REQUIRE_PG") == "1" {
			t.Fatalf("AGBENCH_REQUIRE_PG=1 but %v", err)
		}
		t.Skipf("no PostgreSQL: %v", err)
	}
}

// Home makes an agbench home in a temporary folder that the server's OS user can reach,
// removed when the test ends.
func Home(t testing.TB) string {
	t.Helper()
	home, err := os.MkdirTemp("", "agbench-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	return home
}

// New creates a running cluster for the test and destroys it when the test ends.
func New(t testing.TB, o Options) *cluster.Topology {
	t.Helper()
	Require(t)
	return NewIn(t, Home(t), o)
}

// NewIn creates the cluster under the given agbench home.
func NewIn(t testing.TB, home string, o Options) *cluster.Topology {
	t.Helper()
	topo, err := create(home, o, t.Logf)
	if err != nil {
		t.Fatalf("create test cluster: %v", err)
	}
	dir := topo.Dir
	stopped := whileRunning(func() { _ = destroy(dir) })
	t.Cleanup(func() {
		defer stopped()
		if err := destroy(dir); err != nil {
			t.Errorf("destroy test cluster: %v", err)
		}
	})
	return topo
}

// create makes and starts a cluster of shape o under home, on free ports; a port taken
// between the check and the start is tried again on other ports. logf reports each failed
// attempt.
func create(home string, o Options, logf func(string, ...any)) (*cluster.Topology, error) {
	if o.Commit == "" {
		o.Commit = cluster.CommitAsync
	}
	if o.Name == "" {
		o.Name = "t"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var last error
	for attempt := 0; attempt < 6; attempt++ {
		n := o.Standbys + 1
		if o.HA != "" {
			n = cluster.PatroniPortSpan
		}
		base, err := FreePorts(n)
		if err != nil {
			return nil, err
		}
		topo, err := cluster.Create(ctx, cluster.CreateOptions{
			Home: home, Name: o.Name, Standbys: o.Standbys, Commit: o.Commit, BasePort: base,
			PGBin: os.Getenv("AGBENCH_PG_BIN"), Settings: settingsOf(o), Host: o.Host, HA: o.HA, Netns: o.Netns,
		})
		if err == nil {
			return topo, nil
		}
		last = err
		if !agerr.IsBadInput(err) {
			logf("create attempt %d: %v", attempt+1, err)
		}
	}
	return nil, last
}

// settingsOf is o's server settings as key=value, sorted, with fsync=off unless o sets it.
func settingsOf(o Options) []string {
	settings := map[string]string{"fsync": "off"}
	for k, v := range o.Settings {
		settings[k] = v
	}
	var set []string
	for _, k := range sortedKeys(settings) {
		set = append(set, k+"="+settings[k])
	}
	return set
}

// destroy removes the cluster in dir; one the test destroyed itself is no error.
func destroy(dir string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cur, err := cluster.LoadFile(filepath.Join(dir, "topology.json"))
	if err != nil {
		return nil
	}
	return cur.Destroy(ctx)
}

// FreePorts finds n consecutive free loopback ports, reserved for this test process until it
// ends, and returns the first (freeport.Consecutive).
func FreePorts(n int) (int, error) {
	return freeport.Consecutive(n)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// PortFree returns an error when something listens on 127.0.0.1:port.
func PortFree(port int) error {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return fmt.Errorf("port %d is in use", port)
	}
	return l.Close()
}
