package privilege

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/target"
)

// Logins and a schema whose names need quoting: reserved keywords, capitals, a dash.
var quotedNames = []string{"user", "Group", "app-ro"}

// The GRANTs a refusal prints run as printed, as the superuser, for logins and a schema
// whose names need quoting, and the login then has what it lacked.
func TestRefusalGrantsRunForQuotedNames(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topo, db, su := superuserInOwnDatabase(ctx, t)
	if _, err := su.Exec(ctx, `CREATE SCHEMA "order"; CREATE TABLE "order".a (x int)`); err != nil {
		t.Fatal(err)
	}
	needs := []Need{UseSchema("order"), OnTables("order", "to work", map[string][]string{"a": {"SELECT"}}), CreateTable("x")}
	for _, name := range quotedNames {
		login := addLogin(ctx, t, su, topo.ConnString(topo.Primary(), db), name)
		cs := fmt.Sprintf("host=%s port=%d user='%s' password=pw dbname=%s sslmode=disable",
			topo.Primary().Host, topo.Primary().ClientPort(), name, db)
		err := CheckServer(ctx, "--primary", cs, "test", needs)
		if !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "run on the primary: ") {
			t.Fatalf("login %s without grants: %v, want a refusal", name, err)
		}
		msg := err.Error()
		grants := msg[strings.Index(msg, "run on the primary: ")+len("run on the primary: "):]
		if !strings.Contains(grants, " TO "+login+";") || !strings.Contains(grants, ` SCHEMA "order" `) {
			t.Errorf("login %s: grants %s do not name %s and schema \"order\"", name, grants, login)
		}
		if _, err := su.Exec(ctx, grants); err != nil {
			t.Errorf("login %s: %s: %v", name, grants, err)
			continue
		}
		if err := CheckServer(ctx, "--primary", cs, "test", needs); err != nil {
			t.Errorf("login %s after %s: %v", name, grants, err)
		}
	}
}

// addLogin makes a login of name (password pw) on su and drops it, and what it was granted
// in su's database, when the test ends (through cs, su's server and database); it returns
// the name quoted.
func addLogin(ctx context.Context, t *testing.T, su *pgx.Conn, cs, name string) string {
	t.Helper()
	q := pgx.Identifier{name}.Sanitize()
	if _, err := su.Exec(ctx, "CREATE ROLE "+q+" LOGIN PASSWORD 'pw'"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := target.Connect(ctx, cs, "agbench-test")
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close(ctx)
		for _, s := range []string{"DROP OWNED BY " + q, "DROP ROLE " + q} {
			if _, err := c.Exec(ctx, s); err != nil {
				t.Errorf("%s: %v", s, err)
			}
		}
	})
	return q
}

// Ident quotes as the server's quote_ident does: every keyword of the server the tests run
// on, and names of other shapes.
func TestIdentAsTheServerQuotes(t *testing.T) {
	t.Parallel()
	topo := clustertest.Shared(t, clustertest.Options{Standbys: 1})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := topo.Connect(ctx, topo.Primary())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	rows, err := c.Query(ctx, `SELECT w, quote_ident(w) FROM (SELECT word FROM pg_get_keywords()
		UNION ALL SELECT unnest($1::text[])) k(w)`, append([]string{"tpcc", "x2", "_a", "2x", `a"b`, "é"}, quotedNames...))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var word, quoted string
		if err := rows.Scan(&word, &quoted); err != nil {
			t.Fatal(err)
		}
		n++
		if got := Ident(word); got != quoted {
			t.Errorf("Ident(%q) = %s, quote_ident %s", word, got, quoted)
		}
	}
	if rows.Err() != nil || n < 400 {
		t.Fatalf("%d names compared: %v", n, rows.Err())
	}
}
