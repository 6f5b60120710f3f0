package privilege

import (
	"strings"
	"testing"
)

func TestIdent(t *testing.T) {
	for in, want := range map[string]string{
		"tpcc": "tpcc", "tpcc_meta2": "tpcc_meta2", "App": `"App"`, "2x": `"2x"`, `a"b`: `"a""b"`, "a-b": `"a-b"`,
		"user": `"user"`, "group": `"group"`, "Group": `"Group"`, "app-ro": `"app-ro"`, "data": "data",
	} {
		if got := Ident(in); got != want {
			t.Errorf("Ident(%q) = %s, want %s", in, got, want)
		}
	}
}

// A refusal names the login, what it lacks and why, who may grant it, and every statement.
func TestRefusal(t *testing.T) {
	l := &Login{Name: "App", NameIdent: `"App"`, DatabaseIdent: "shop", SchemaIdent: "public"}
	got := Refusal(l, "tpcc build", []Need{CreateSchema("tpcc"), OwnSchema("tpcc")})
	want := `the login App (plain login) lacks what tpcc build needs: CREATE on database shop (to create schema tpcc); ` +
		`ownership of schema tpcc (to drop the schema it finds and build it again); as a superuser or the database's owner ` +
		`or the schema's owner, run on the primary: GRANT CREATE ON DATABASE shop TO "App"; ALTER SCHEMA tpcc OWNER TO "App";`
	if got != want {
		t.Errorf("refusal\n got %s\nwant %s", got, want)
	}
	n := OnTables("s", "to work", map[string][]string{"b": {"DELETE", "SELECT"}, "a": {"INSERT"}})
	if w := n.What(l); w != "SELECT, INSERT, DELETE on the tables of schema s" {
		t.Errorf("what %q", w)
	}
	if g := n.Grant(l); g != `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA s TO "App";` {
		t.Errorf("grant %q", g)
	}
	for _, r := range []string{"superuser", "pg_monitor", "pg_read_all_stats", "plain login"} {
		l := &Login{Superuser: r == "superuser", Monitor: r == "pg_monitor", ReadAllStats: r != "plain login"}
		if l.Role() != r {
			t.Errorf("role %q, want %q", l.Role(), r)
		}
	}
	if !strings.Contains(CreateTableIfMissing("t'1").Holds, "to_regclass('t''1')") {
		t.Error("a table's name is not quoted as a literal")
	}
}
