package privilege

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/target"
)

// An ordinary login without the grants is refused as bad input naming the flag, the
// server, the login, each privilege and the statements; once a superuser runs exactly those
// statements on the primary, the primary and the standby both pass; a superuser passes
// from the start.
func TestRefusalGrantsWhatItNames(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topo, db, su := superuserInOwnDatabase(ctx, t)
	for _, q := range []string{
		`CREATE SCHEMA "Ps"`, `CREATE TABLE "Ps".a (x int)`, `CREATE TABLE "Ps".b (x int)`,
		`CREATE FUNCTION "Ps".f() RETURNS int LANGUAGE sql AS 'SELECT 1'`,
		`REVOKE EXECUTE ON FUNCTION "Ps".f() FROM PUBLIC`,
	} {
		if _, err := su.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	needs := Needs{Command: "test", Primary: []Need{UseSchema("Ps"),
		OnTables("Ps", "to work", map[string][]string{"a": {"SELECT", "INSERT"}, "b": {"DELETE"}}), ExecuteFunctions("Ps")}}
	needs.Standby = needs.Primary
	ordinary := func(n int) string {
		return target.WithDatabase(clustertest.OrdinaryConnString(topo, &topo.Nodes[n]), db)
	}
	tgt := &target.Target{Primary: ordinary(0), Standbys: []string{ordinary(1)}}
	if err := topo.WaitCaughtUp(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	err := Check(ctx, tgt, needs)
	if !agerr.IsBadInput(err) {
		t.Fatalf("ordinary login without grants: %v, want bad input", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"--primary host=127.0.0.1", "--standby host=127.0.0.1", "password=xxxxx",
		"the login app (plain login) lacks what test needs: USAGE on schema \"Ps\" (to reach its tables and functions); " +
			"SELECT, INSERT, DELETE on the tables of schema \"Ps\" (to work); EXECUTE on every function of schema \"Ps\"",
		`run on the primary: GRANT USAGE ON SCHEMA "Ps" TO app; GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "Ps" TO app; GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA "Ps" TO app;`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, clustertest.OrdinaryPassword) {
		t.Errorf("refusal shows the password:\n%s", msg)
	}
	// The statements it names, and nothing else, give what it lacks.
	grants := msg[strings.Index(msg, "run on the primary: ")+len("run on the primary: "):]
	grants = grants[:strings.Index(grants, "\n")]
	if _, err := su.Exec(ctx, grants); err != nil {
		t.Fatalf("%s: %v", grants, err)
	}
	if err := topo.WaitCaughtUp(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := Check(ctx, tgt, needs); err != nil {
		t.Errorf("after %s: %v", grants, err)
	}
	super := &target.Target{Primary: topo.ConnString(topo.Primary(), db)}
	if err := Check(ctx, super, needs); err != nil {
		t.Errorf("superuser: %v", err)
	}
}

// CREATE on a database the ordinary login does not own: refused naming the database's
// GRANT; the login and its roles are read as the server says.
func TestLoginAndCreateSchema(t *testing.T) {
	t.Parallel()
	topo := clustertest.Shared(t, clustertest.Options{Standbys: 1})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := clustertest.OrdinaryConnString(topo, topo.Primary())
	err := CheckServer(ctx, "--primary", cs, "tpcc build", []Need{CreateSchema("tpcc")})
	want := fmt.Sprintf("CREATE on database %s (to create schema tpcc); as a superuser or the database's owner, run on the primary: GRANT CREATE ON DATABASE %[1]s TO app;", topo.Database)
	if !agerr.IsBadInput(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want bad input with %q", err, want)
	}
	for _, c := range []struct {
		cs, role string
	}{{cs, "plain login"}, {topo.ConnString(topo.Primary(), ""), "superuser"}} {
		conn, err := target.Connect(ctx, c.cs, "agbench-test")
		if err != nil {
			t.Fatal(err)
		}
		l, missing, err := Lacks(ctx, conn, []Need{CreateTable("x")})
		conn.Close(ctx)
		if err != nil || l.Role() != c.role || len(missing) != 0 {
			t.Errorf("%s: login %+v, missing %d, %v", c.role, l, len(missing), err)
		}
	}
}

// A statement the server refuses for want of a privilege names the login and the GRANT of
// what it reads: USAGE on the schema, then SELECT on the table with its schema; any other
// error is none of Denied's.
func TestDenied(t *testing.T) {
	t.Parallel()
	topo := clustertest.Shared(t, clustertest.Options{Standbys: 1})
	db := clustertest.OwnDatabase(t, topo)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	su, err := target.Connect(ctx, topo.ConnString(topo.Primary(), db), "agbench-test")
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close(ctx)
	if _, err := su.Exec(ctx, `CREATE SCHEMA d; CREATE TABLE d.t (x int)`); err != nil {
		t.Fatal(err)
	}
	c, err := target.Connect(ctx, target.WithDatabase(clustertest.OrdinaryConnString(topo, topo.Primary()), db), "agbench-test")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for _, step := range []struct{ grant, want string }{
		{"", "the login app (plain login) may not read: permission denied for schema d; as a superuser or its owner, run on the primary: GRANT USAGE ON SCHEMA d TO app;"},
		{"GRANT USAGE ON SCHEMA d TO app", "the login app (plain login) may not read: permission denied for table t; as a superuser or its owner, run on the primary: GRANT SELECT ON d.t TO app;"},
		{"GRANT SELECT ON d.t TO app", ""},
	} {
		if step.grant != "" {
			if _, err := su.Exec(ctx, step.grant); err != nil {
				t.Fatal(err)
			}
		}
		_, err := c.Exec(ctx, "SELECT count(*) FROM d.t")
		if got := Denied(ctx, c, "read", "SELECT count(*) FROM d.t", err); got != step.want {
			t.Errorf("after %q: %v\n got %q\nwant %q", step.grant, err, got, step.want)
		}
	}
	_, err = c.Exec(ctx, "SELECT 1/0")
	if got := Denied(ctx, c, "divide", "SELECT 1/0", err); err == nil || got != "" {
		t.Errorf("division by zero: %q (%v)", got, err)
	}
}

// superuserInOwnDatabase is a superuser's session, closed when the test ends, in a database
// of the test's own on the package's shared cluster (a primary and a standby).
func superuserInOwnDatabase(ctx context.Context, t *testing.T) (*cluster.Topology, string, *pgx.Conn) {
	t.Helper()
	topo := clustertest.Shared(t, clustertest.Options{Standbys: 1})
	db := clustertest.OwnDatabase(t, topo)
	su, err := target.Connect(ctx, topo.ConnString(topo.Primary(), db), "agbench-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { su.Close(context.Background()) })
	return topo, db, su
}
