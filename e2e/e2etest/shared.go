package e2etest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// The ordinary login every shared cluster has beside its superuser: it owns a database of
// its name and nothing else.
const (
	App   = "app"
	AppPW = "app-secret"
)

// Cluster is a cluster that a test package's tests share: made by `agbench cluster create`
// under the package's own agbench home, the first time a test asks for it, and destroyed by
// Main when the package's tests end. Tests that share it do not change its shape (no node
// stopped, promoted or added), and each names what it makes (tables, result folders,
// application_name) as its own and judges only its own work.
type Cluster struct {
	Topo *cluster.Topology
	// Env runs agbench with the cluster's home (AGBENCH_HOME), so that --cluster finds it.
	Env map[string]string
}

// Home is the test package's agbench home, where its shared clusters live: made by Main,
// removed when the package's tests end. A test that makes a cluster of its own may make it
// here too, under a name of its own.
func Home(t testing.TB) string {
	t.Helper()
	if tmp == "" {
		t.Fatal("e2etest.Home: the package's TestMain does not call e2etest.Main")
	}
	return filepath.Join(tmp, "home")
}

// Home is the agbench home the cluster lives in (the package's, Home).
func (c *Cluster) Home() string { return c.Env["AGBENCH_HOME"] }

// Name is the cluster's name, for --cluster.
func (c *Cluster) Name() string { return c.Topo.Name }

// AppURL is a postgres:// URL of node as the ordinary login App, to its own database.
func (c *Cluster) AppURL(n *cluster.Node) string {
	return fmt.Sprintf("postgres://%s:%s@%s:%d/%s?sslmode=disable", App, AppPW, n.Host, n.ClientPort(), App)
}

// Shape is what a shared cluster is made of.
type Shape struct {
	Name     string // the cluster's name, unique in the package
	Standbys int
	Commit   string // "" means async
}

type shared struct {
	once sync.Once
	c    *Cluster
	err  error
}

var (
	sharedMu sync.Mutex
	clusters = map[string]*shared{}
)

// Shared returns the package's shared cluster of shape s (by its name), making it on the
// first call. It skips the test under -short and without PostgreSQL (clustertest.Require);
// a cluster that could not be made fails every test that asks for it.
func Shared(t testing.TB, s Shape) *Cluster {
	t.Helper()
	clustertest.Require(t)
	sharedMu.Lock()
	sh := clusters[s.Name]
	if sh == nil {
		sh = &shared{}
		clusters[s.Name] = sh
	}
	sharedMu.Unlock()
	sh.once.Do(func() { sh.c, sh.err = create(t, s) })
	if sh.err != nil {
		t.Fatalf("shared cluster %s: %v", s.Name, sh.err)
	}
	return sh.c
}

// create makes a shared cluster with agbench cluster create, on ports reserved for this
// test process, with fsync off, and gives it the ordinary login.
func create(t testing.TB, s Shape) (*Cluster, error) {
	home := Home(t)
	if s.Commit == "" {
		s.Commit = cluster.CommitAsync
	}
	base, err := clustertest.FreePorts(s.Standbys + 1)
	if err != nil {
		return nil, err
	}
	env := map[string]string{"AGBENCH_HOME": home}
	code, out, errs := Run(t, env, "cluster", "create", "--name", s.Name, "--standbys", strconv.Itoa(s.Standbys),
		"--commit", s.Commit, "--base-port", strconv.Itoa(base), "--set", "fsync=off")
	if code != 0 {
		return nil, fmt.Errorf("agbench cluster create: exit %d\n%s\n%s", code, out, errs)
	}
	topo, err := cluster.Load(home, s.Name)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Topo: topo, Env: env}
	return c, addApp(topo)
}

// addApp makes the ordinary login and its database on the cluster's primary.
func addApp(topo *cluster.Topology) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := topo.Connect(ctx, topo.Primary())
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, q := range []string{
		fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD '%s'", App, AppPW),
		fmt.Sprintf("CREATE DATABASE %s OWNER %s", App, App),
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// destroyShared destroys every shared cluster that was made.
func destroyShared() error {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	var errs []error
	for name, sh := range clusters {
		if sh.c == nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		topo, err := cluster.Load(sh.c.Home(), name)
		if err == nil {
			err = topo.Destroy(ctx)
		}
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// Database makes a database of the test's own on the cluster's primary, named name, waits
// until every standby has replayed it (a command checks each node before any load), and
// drops it when the test ends (a second -count runs on the same shared cluster).
func (c *Cluster) Database(t testing.TB, name string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := c.Topo.Connect(ctx, c.Topo.Primary())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var lsn string
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&lsn); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Topo.Standbys() {
		c.waitReplayed(t, n, lsn)
	}
	t.Cleanup(func() {
		conn, err := c.Topo.Connect(ctx, c.Topo.Primary())
		if err != nil {
			t.Errorf("drop database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	return name
}

// waitReplayed waits, up to two minutes, until standby n has replayed the primary's WAL up
// to lsn.
func (c *Cluster) waitReplayed(t testing.TB, n *cluster.Node, lsn string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := c.Topo.Connect(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for {
		var done bool
		err := conn.QueryRow(ctx, "SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn", lsn).Scan(&done)
		if err != nil {
			t.Fatalf("standby %s: replayed up to %s: %v", n.Name, lsn, err)
		}
		if done {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
