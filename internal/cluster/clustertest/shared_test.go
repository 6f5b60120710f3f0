package clustertest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

// Tests asking for one shape get one cluster; another shape is another cluster. Its ordinary
// login reaches every node, is no superuser and has no monitoring role, and can make tables
// in a database of the test's own.
func TestSharedOnePerShapeWithOrdinaryLogin(t *testing.T) {
	t.Parallel()
	a := Shared(t, Options{Standbys: 1})
	if b := Shared(t, Options{Standbys: 1}); b != a {
		t.Fatalf("one shape, two clusters: %s and %s", a.Dir, b.Dir)
	}
	if c := Shared(t, Options{}); c == a {
		t.Fatal("a lone primary and a primary with a standby are one cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range a.Nodes {
		n := &a.Nodes[i]
		c, err := pgx.Connect(ctx, OrdinaryConnString(a, n))
		if err != nil {
			t.Fatalf("%s as %s: %v", n.Name, OrdinaryUser, err)
		}
		var super, monitor bool
		err = c.QueryRow(ctx, `SELECT rolsuper, pg_has_role(current_user, 'pg_monitor', 'MEMBER') FROM pg_roles WHERE rolname = current_user`).Scan(&super, &monitor)
		c.Close(ctx)
		if err != nil || super || monitor {
			t.Fatalf("%s: superuser %v, pg_monitor %v, %v", n.Name, super, monitor, err)
		}
	}
	// In a database of its own (a second run of the test gets another), the ordinary login
	// makes a table that the standby shows.
	db := OwnDatabase(t, a)
	c, err := pgx.Connect(ctx, strings.Replace(OrdinaryConnString(a, a.Primary()), "dbname="+a.Database, "dbname="+db, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, `CREATE TABLE own (id int); INSERT INTO own VALUES (1)`); err != nil {
		t.Fatalf("the ordinary login cannot make a table in its database: %v", err)
	}
	s, err := pgx.Connect(ctx, a.ConnString(a.Standbys()[0], db))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	for {
		var n int
		if err := s.QueryRow(ctx, `SELECT count(*) FROM own`).Scan(&n); err == nil && n == 1 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the standby never showed the ordinary login's row")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// A shared cluster in network namespaces is a shape of its own: its ordinary login reaches
// every node at the node's own address, and each node names its exporter.
func TestSharedNetns(t *testing.T) {
	t.Parallel()
	RequireNetns(t)
	a := Shared(t, Options{Standbys: 1, Netns: true})
	if b := Shared(t, Options{Standbys: 1}); b == a || b.Netns != nil {
		t.Fatal("a cluster in namespaces and a plain one are one cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range a.Nodes {
		n := &a.Nodes[i]
		if !strings.HasPrefix(n.HostMetrics, "http://"+n.Host+":") || strings.HasPrefix(n.Host, "127.") {
			t.Errorf("%s at %s: host metrics %q; want its exporter at its own address", n.Name, n.Host, n.HostMetrics)
		}
		c, err := pgx.Connect(ctx, OrdinaryConnString(a, n))
		if err != nil {
			t.Fatalf("%s as %s: %v", n.Name, OrdinaryUser, err)
		}
		var at string
		err = c.QueryRow(ctx, `SELECT host(inet_server_addr())`).Scan(&at)
		c.Close(ctx)
		if err != nil || at != n.Host {
			t.Errorf("%s: reached at %q (%v); want %s", n.Name, at, err, n.Host)
		}
	}
}
