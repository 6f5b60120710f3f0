package privilege

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/target"
)

func TestParseNames(t *testing.T) {
	for q, want := range map[string]sqlNames{
		"SELECT count(*) FROM d.t": {verb: "select", relations: []sqlName{{"d", "t"}}, functions: []sqlName{{"", "count"}}, schemas: []string{"d"}},
		`INSERT INTO "W" (v) SELECT repeat('x', 2) FROM generate_series(1, 2) RETURNING id`: {verb: "insert", target: sqlName{"", "W"}, returns: true,
			relations: []sqlName{{"", "W"}, {"", "generate_series"}}, functions: []sqlName{{"", "repeat"}}, literals: []string{"x"}},
		"UPDATE s.t SET x = x + 1 WHERE y IN (SELECT y FROM u, v ORDER BY a, b)": {verb: "update", target: sqlName{"s", "t"}, reads: true,
			relations: []sqlName{{"s", "t"}, {"", "u"}, {"", "v"}}, schemas: []string{"s"}},
		"-- a comment FROM x\nSELECT nextval('s.q') /* FROM y /* nested */ FROM z */, $1, $$FROM w$$ FROM \"A\".\"B\"": {verb: "select",
			relations: []sqlName{{"A", "B"}}, functions: []sqlName{{"", "nextval"}}, schemas: []string{"A"}, literals: []string{"s.q"}},
		"CALL p.run(1)": {verb: "call", functions: []sqlName{{"p", "run"}}, schemas: []string{"p"}},
	} {
		got := parseNames(q)
		if got.verb != want.verb || got.target != want.target || got.reads != want.reads || got.returns != want.returns ||
			!slices.Equal(got.relations, want.relations) || !slices.Equal(got.functions, want.functions) ||
			!slices.Equal(got.schemas, want.schemas) || !slices.Equal(got.literals, want.literals) {
			t.Errorf("%q:\n got %+v\nwant %+v", q, got, want)
		}
	}
}

// FuzzParseNames: any text reads without a panic, and every name it finds is in the text
// (folded to lower case, or quoted with its quotes doubled).
func FuzzParseNames(f *testing.F) {
	for _, q := range []string{"SELECT count(*) FROM d.t", `INSERT INTO "a""b" VALUES ('it''s')`, "SELECT $x$ $y$ $x$, $1", "/* /* */", `"`, "'", "a.", "$"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		n := parseNames(q)
		text := strings.ToLower(strings.ReplaceAll(q, `""`, `"`))
		for _, r := range append(slices.Clone(n.relations), n.functions...) {
			for _, part := range []string{r.schema, r.name} {
				if !strings.Contains(text, strings.ToLower(part)) {
					t.Errorf("%q: name %+v is not in the text", q, r)
				}
			}
		}
	})
}

// The GRANT a refusal names comes from the SQLSTATE and the catalogue, not from the
// server's words: with every message replaced by a German one (as under lc_messages
// de_DE, which this machine may not have), each denied statement is given the GRANT
// that lets it run, one at a time, until it runs.
func TestDeniedUnderAnotherLanguage(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topo, db, su := superuserInOwnDatabase(ctx, t)
	if _, err := su.Exec(ctx, `CREATE SCHEMA dz; CREATE TABLE dz.t (x int); CREATE TABLE dz.w (id bigserial, v text);
		CREATE SEQUENCE dz.s; CREATE FUNCTION dz.f(int) RETURNS int LANGUAGE sql AS 'SELECT $1';
		REVOKE EXECUTE ON FUNCTION dz.f(int) FROM PUBLIC`); err != nil {
		t.Fatal(err)
	}
	c, err := target.Connect(ctx, target.WithDatabase(clustertest.OrdinaryConnString(topo, topo.Primary()), db), "agbench-test")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for _, s := range []struct {
		query  string
		grants []string
	}{
		{"SELECT count(*) FROM dz.t", []string{"GRANT USAGE ON SCHEMA dz TO app;", "GRANT SELECT ON dz.t TO app;"}},
		{"INSERT INTO dz.w (v) VALUES ('x')", []string{"GRANT INSERT ON dz.w TO app;", "GRANT USAGE, SELECT ON SEQUENCE dz.w_id_seq TO app;"}},
		{"UPDATE dz.t SET x = 1 WHERE x = 0", []string{"GRANT UPDATE ON dz.t TO app;"}},
		{"SELECT dz.f(1)", []string{"GRANT EXECUTE ON FUNCTION dz.f(integer) TO app;"}},
		{"SELECT nextval('dz.s')", []string{"GRANT USAGE, SELECT ON SEQUENCE dz.s TO app;"}},
	} {
		for _, want := range append(s.grants, "") {
			_, err := c.Exec(ctx, s.query)
			var pe *pgconn.PgError
			if want == "" {
				if err != nil {
					t.Errorf("%s after its grants: %v", s.query, err)
				}
				break
			}
			if !errors.As(err, &pe) {
				t.Fatalf("%s: %v, want it refused for %s", s.query, err, want)
			}
			de := *pe
			de.Message = "keine Berechtigung"
			got := Denied(ctx, c, "run it", s.query, &de)
			if !strings.HasSuffix(got, "keine Berechtigung; as a superuser or its owner, run on the primary: "+want) {
				t.Fatalf("%s: %q, want the grant %s", s.query, got, want)
			}
			if _, err := su.Exec(ctx, want); err != nil {
				t.Fatalf("%s: %v", want, err)
			}
		}
	}
}
