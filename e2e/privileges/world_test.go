package privileges

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// A login of the matrix. The superuser has no user here: it is the cluster's own (its
// pgpass file, or the hand-made cluster's admin).
type login struct {
	kind           string // superuser, pg_monitor, plain
	user, password string
}

func (l login) super() bool { return l.kind == "superuser" }

// readsAllStats says whether the login has pg_read_all_stats' privileges (and
// pg_read_all_settings'): the superuser and pg_monitor do.
func (l login) readsAllStats() bool { return l.kind != "plain" }

// The logins every world has beside its superuser.
var (
	monitor = login{kind: "pg_monitor", user: "mon", password: "mon-secret"}
	plain   = login{kind: "plain", user: clustertest.OrdinaryUser, password: clustertest.OrdinaryPassword}
)

// world is one cluster of the matrix: two nodes, its logins and how to reach them.
type world struct {
	name string
	env  map[string]string
	// cluster is the agbench cluster's name (its superuser's commands take --cluster).
	cluster string
	db      string
	ports   []int
	// superCS is node i's connection string for the superuser, to db.
	superCS func(i int) string
	logins  []login
	// ownsDB names the logins that own db (they may build tpcc there).
	ownsDB map[string]bool
	// patroni are the nodes' Patroni REST APIs, in node order (Patroni only).
	patroni []string
	// grants serialises sql: PostgreSQL takes no lock for GRANT or REVOKE, so two cells
	// side by side changing one object's privileges (schema public's, for two logins)
	// update its catalog row at once and one fails "tuple concurrently updated".
	grants sync.Mutex
}

// cs is node i's connection string for l.
func (w *world) cs(l login, i int) string {
	if l.super() {
		return w.superCS(i)
	}
	return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", l.user, l.password, w.ports[i], w.db)
}

// admin connects to node i as the superuser.
func (w *world) admin(t *testing.T, i int) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, w.superCS(i))
	if err != nil {
		t.Fatalf("%s: connect to node %d as the superuser: %v", w.name, i, err)
	}
	return c
}

// roles finds which node is the primary now and the other, waiting (up to two minutes) for
// every node to answer with exactly one accepting writes: after a drill's switchover the
// old primary restarts as a standby.
func (w *world) roles(t *testing.T) (primary, standby int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for {
		primary, err := w.primaryNow(ctx)
		if err == nil {
			return primary, 1 - primary
		}
		if ctx.Err() != nil {
			t.Fatalf("%s: no settled primary: %v", w.name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// primaryNow asks every node whether it is in recovery; an error unless all answer and
// exactly one is not.
func (w *world) primaryNow(ctx context.Context) (int, error) {
	primary := -1
	for i := range w.ports {
		c, err := pgx.Connect(ctx, w.superCS(i))
		if err != nil {
			return -1, err
		}
		var rec bool
		err = c.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&rec)
		c.Close(ctx)
		switch {
		case err != nil:
			return -1, err
		case !rec && primary >= 0:
			return -1, fmt.Errorf("nodes %d and %d both accept writes", primary, i)
		case !rec:
			primary = i
		}
	}
	if primary < 0 {
		return -1, fmt.Errorf("no node accepts writes")
	}
	return primary, nil
}

// run runs agbench on the world.
func (w *world) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return e2etest.Run(t, w.env, args...)
}

// sql runs statements as the superuser on the primary and waits until the standby has
// replayed them.
func (w *world) sql(t *testing.T, stmts string) {
	t.Helper()
	p, s := w.roles(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := w.admin(t, p)
	defer c.Close(ctx)
	w.grants.Lock()
	_, err := c.Exec(ctx, stmts)
	w.grants.Unlock()
	if err != nil {
		t.Fatalf("%s: %s: %v", w.name, stmts, err)
	}
	var lsn string
	if err := c.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&lsn); err != nil {
		t.Fatal(err)
	}
	sc := w.admin(t, s)
	defer sc.Close(ctx)
	for {
		var done bool
		if err := sc.QueryRow(ctx, "SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn", lsn).Scan(&done); err != nil {
			t.Fatalf("%s: the standby's replay: %v", w.name, err)
		}
		if done {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// addLogins makes the pg_monitor login (and the plain one, where the cluster has none).
func (w *world) addLogins(t *testing.T, withPlain bool) {
	t.Helper()
	q := fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD '%s' IN ROLE pg_monitor;", monitor.user, monitor.password)
	if withPlain {
		q += fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD '%s';", plain.user, plain.password)
	}
	w.sql(t, q)
	w.logins = []login{{kind: "superuser"}, monitor, plain}
}

// madeByAgbench is the package's shared cluster made by agbench cluster create: a primary
// and a standby, its superuser from its pgpass file, and the ordinary login app (CREATE on
// schema public, nothing else).
func madeByAgbench(t *testing.T) *world {
	topo, env := e2etest.Shared(t, clustertest.Options{Standbys: 1})
	w := topoWorld("agbench", topo)
	w.env, w.cluster = env, topo.Name
	w.addLogins(t, false)
	return w
}

// handBuilt is a primary and a standby built with initdb and pg_basebackup: superuser
// admin, and app, the owner of database app (so it may make schemas there).
func handBuilt(t *testing.T) *world {
	h := clustertest.NewHandmade(t, 1)
	w := &world{name: "hand-built", env: map[string]string{"AGBENCH_HOME": t.TempDir()}, db: clustertest.HandmadeDatabase,
		ports: h.Ports, superCS: func(i int) string { return h.ConnString(i, clustertest.HandmadeAdmin) },
		ownsDB: map[string]bool{plain.user: true}}
	w.addLogins(t, false)
	return w
}

// underPatroni is a primary and a standby under Patroni (etcd, Debian's packages), with
// an ordinary login app made by hand (no grants at all).
func underPatroni(t *testing.T) *world {
	clustertest.RequirePatroni(t)
	topo := clustertest.New(t, clustertest.Options{Standbys: 1, HA: "patroni"})
	w := topoWorld("patroni", topo)
	w.env = map[string]string{"AGBENCH_HOME": t.TempDir()}
	w.patroni = topo.RESTURLs()
	w.addLogins(t, true)
	return w
}

// topoWorld is a world of a topology's nodes, the superuser's from its pgpass file.
func topoWorld(name string, topo *cluster.Topology) *world {
	w := &world{name: name, db: topo.Database, ownsDB: map[string]bool{}}
	for i := range topo.Nodes {
		w.ports = append(w.ports, topo.Nodes[i].ClientPort())
	}
	w.superCS = func(i int) string { return topo.ConnString(&topo.Nodes[i], "") }
	return w
}
