package clustertest

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster"
)

// The ordinary login every shared cluster has beside its superuser: no superuser, no
// pg_monitor, no pg_read_all_stats; it may create tables in the cluster's database.
const (
	OrdinaryUser     = "app"
	OrdinaryPassword = "app-secret"
)

// The shared clusters of this test process, one per shape, made on first use and destroyed
// by Main.
var shared struct {
	mu       sync.Mutex
	main     bool // Main runs the package's tests: someone will destroy what Shared makes
	clusters map[string]*sharedCluster
}

type sharedCluster struct {
	once sync.Once
	home string
	topo *cluster.Topology
	err  error
}

// Main runs a package's tests (call it from TestMain) and then destroys the shared clusters
// they made. A cluster it cannot destroy fails the run.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is Main for a TestMain with work of its own after the tests: it returns the exit
// status instead of exiting.
func Run(m *testing.M) int {
	shared.mu.Lock()
	shared.main = true
	shared.mu.Unlock()
	cancel := watchdog()
	code := m.Run()
	cancel()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	for _, sc := range shared.clusters {
		if sc.topo != nil {
			if err := destroy(sc.topo.Dir); err != nil {
				fmt.Fprintf(os.Stderr, "clustertest: destroy shared cluster %s: %v\n", sc.topo.Dir, err)
				code = 1
			}
		}
		if sc.home != "" {
			os.RemoveAll(sc.home)
		}
	}
	return code
}

// Shared returns the test process's cluster of shape o (standbys, commit mode, settings,
// nodes in network namespaces of their own or not), made on its first use and destroyed when
// the package's tests end (its TestMain calls Main).
// Tests that share it run in parallel: each names its own objects (tables, roles,
// application_name), judges only what its own work moved in cluster-wide counters, and
// never changes the cluster's shape (no stop, kill, promote, freeze or settings change):
// a test that does gets a cluster of its own from New.
func Shared(t testing.TB, o Options) *cluster.Topology {
	t.Helper()
	Require(t)
	if o.Host != (Options{}).Host || o.HA != "" || o.Name != "" {
		t.Fatal("a shared cluster is a plain one: hosts, HA and a name call for New")
	}
	key := fmt.Sprintf("%d %s %s", o.Standbys, o.Commit, strings.Join(settingsOf(o), " "))
	if o.Netns {
		RequireNetns(t)
		key += " netns"
	}
	shared.mu.Lock()
	if !shared.main {
		shared.mu.Unlock()
		t.Fatal("clustertest.Shared needs the package's TestMain to call clustertest.Main, which destroys the cluster")
	}
	if shared.clusters == nil {
		shared.clusters = map[string]*sharedCluster{}
	}
	sc := shared.clusters[key]
	if sc == nil {
		sc = &sharedCluster{}
		shared.clusters[key] = sc
	}
	shared.mu.Unlock()
	sc.once.Do(func() { sc.make(o) })
	if sc.err != nil {
		t.Fatalf("shared test cluster: %v", sc.err)
	}
	return sc.topo
}

func (sc *sharedCluster) make(o Options) {
	home, err := os.MkdirTemp("", "agbench-test-")
	if err == nil {
		err = os.Chmod(home, 0o755)
	}
	if err != nil {
		sc.err = err
		return
	}
	sc.home = home
	quiet := func(string, ...any) {}
	o.Name = "shared"
	if sc.topo, sc.err = create(home, o, quiet); sc.err != nil {
		return
	}
	dir := sc.topo.Dir
	whileRunning(func() { _ = destroy(dir) }) // Run destroys it after the tests
	sc.err = addOrdinaryLogin(sc.topo)
}

// addOrdinaryLogin creates the ordinary login and waits until every standby has it.
func addOrdinaryLogin(topo *cluster.Topology) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := topo.Connect(ctx, topo.Primary())
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	for _, q := range []string{
		fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD '%s'", OrdinaryUser, OrdinaryPassword),
		fmt.Sprintf("GRANT CREATE ON SCHEMA public TO %s", OrdinaryUser),
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return topo.WaitCaughtUp(ctx, time.Minute)
}

// OrdinaryConnString is a keyword/value connection string to node n of a shared cluster as
// its ordinary login, to the cluster's database.
func OrdinaryConnString(topo *cluster.Topology, n *cluster.Node) string {
	return fmt.Sprintf("host=%s port=%d user=%s password=%s dbname=%s sslmode=disable",
		n.ClientHost(), n.ClientPort(), OrdinaryUser, OrdinaryPassword, topo.Database)
}

// The databases made by OwnDatabase in this test process, numbered so that a test run
// again (-count) or a parallel subtest of the same name gets a new one.
var databases struct {
	mu sync.Mutex
	n  int
}

// OwnDatabase creates a database for this test on topo (owned by the ordinary login, so
// that both logins can work in it), waits until every standby has it, and drops it when the
// test ends. A test that makes objects of fixed names (a TPC-C schema) or reads a database's
// counters (pg_stat_database) works in one of its own on a shared cluster.
func OwnDatabase(t testing.TB, topo *cluster.Topology) string {
	t.Helper()
	databases.mu.Lock()
	databases.n++
	name := fmt.Sprintf("t%d_%s", databases.n, strings.ToLower(nonWord.ReplaceAllString(t.Name(), "_")))
	databases.mu.Unlock()
	if len(name) > 63 {
		name = name[:63]
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := topo.Connect(ctx, topo.Primary())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s OWNER %s", name, OrdinaryUser)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		c, err := topo.Connect(ctx, topo.Primary())
		if err == nil {
			_, err = c.Exec(ctx, fmt.Sprintf("DROP DATABASE %s WITH (FORCE)", name))
			c.Close(context.Background())
		}
		if err != nil {
			t.Errorf("drop the test's database %s: %v", name, err)
		}
	})
	if err := topo.WaitCaughtUp(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	return name
}

var nonWord = regexp.MustCompile(`\W+`)
