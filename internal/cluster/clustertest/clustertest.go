// Package clustertest makes throwaway local clusters for integration tests: a primary and
// N hot standbys in a temporary folder on free loopback ports, always removed when the test
// ends (also when it fails). It must be imported by tests only.
//
// Imports from agbench: only internal/agerr, internal/cgroup, internal/cluster, internal/pgbin.
package clustertest

import (
	"context"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cgroup"
	"github.com/agbench/agbench/internal/cluster"
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
	if o.Commit == "" {
		o.Commit = cluster.CommitAsync
	}
	if o.Name == "" {
		o.Name = "t"
	}
	settings := map[string]string{"fsync": "off"}
	for k, v := range o.Settings {
		settings[k] = v
	}
	var set []string
	for _, k := range sortedKeys(settings) {
		set = append(set, k+"="+settings[k])
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
			t.Fatal(err)
		}
		topo, err := cluster.Create(ctx, cluster.CreateOptions{
			Home: home, Name: o.Name, Standbys: o.Standbys, Commit: o.Commit, BasePort: base,
			PGBin: os.Getenv("AGBENCH_PG_BIN"), Settings: set, Host: o.Host, HA: o.HA,
		})
		if err == nil {
			dir := topo.Dir
			t.Cleanup(func() {
				c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				cur, err := cluster.LoadFile(filepath.Join(dir, "topology.json"))
				if err != nil {
					return // the test destroyed it itself
				}
				if err := cur.Destroy(c); err != nil {
					t.Errorf("destroy test cluster: %v", err)
				}
			})
			return topo
		}
		last = err
		if !agerr.IsBadInput(err) { // a port taken between the check and the start is retried too
			t.Logf("create attempt %d: %v", attempt+1, err)
		}
	}
	t.Fatalf("create test cluster: %v", last)
	return nil
}

// Ports that FreePorts hands out lie below Linux's ephemeral range (32768-60999), so an
// outgoing connection's local port never takes one between the check and the server's start.
const (
	portLow  = 10000
	portHigh = 32000
)

// FreePorts finds n consecutive free loopback ports, reserves them for this test process
// (reserve) and returns the first. Without the reservation, a test of another package running
// at the same time could find the same ports free in the seconds between this check and the
// server's start (a plan's cluster lost its standby's port to a Patroni test's etcd so).
func FreePorts(n int) (int, error) {
	for i := 0; i < 200; i++ {
		base := portLow + rand.Intn(portHigh-portLow-n)
		var held []*os.File
		ok := true
		for p := base; p < base+n && ok; p++ {
			f, got := reserve(p)
			if !got {
				ok = false
				break
			}
			held = append(held, f)
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			reservedMu.Lock()
			reserved = append(reserved, held...)
			reservedMu.Unlock()
			return base, nil
		}
		for _, f := range held {
			f.Close()
		}
	}
	return 0, fmt.Errorf("no %d consecutive free ports found", n)
}

// The ports this test process reserved: their lock files stay open, so their locks hold,
// until the process ends.
var (
	reservedMu sync.Mutex
	reserved   []*os.File
)

// reserve takes port p for this test process: an exclusive lock on a file named after it in a
// folder that every agbench test on the machine shares. It fails when another test process (or
// this one) holds it. Where the folder cannot be written, the listen check alone decides.
func reserve(p int) (*os.File, bool) {
	dir := filepath.Join(os.TempDir(), "agbench-test-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, true
	}
	_ = os.Chmod(dir, 0o1777) // tests run as root and as other users alike
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(p)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, true
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, false
	}
	return f, true
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
