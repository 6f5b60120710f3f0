package privilege

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Need is one privilege a command cannot run without, on one kind of server.
type Need struct {
	// What names the privilege for a person ("CREATE on database app"), and Why what the
	// command does with it ("to create schema tpcc").
	What func(l *Login) string
	Why  string
	// Holds is a boolean SQL expression, true when the session's login holds the privilege.
	Holds string
	// Grant is the statement that gives it to the login, run on the primary.
	Grant func(l *Login) string
	// By says who may run Grant besides a superuser ("the database's owner").
	By string
}

// literal quotes s as an SQL string literal.
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// CreateSchema is CREATE on the session's database: a command that makes a schema of its
// own (tpcc build) needs it.
func CreateSchema(schema string) Need {
	return Need{
		What:  func(l *Login) string { return "CREATE on database " + l.DatabaseIdent },
		Why:   "to create schema " + schema,
		Holds: "has_database_privilege(current_database(), 'CREATE')",
		Grant: func(l *Login) string {
			return fmt.Sprintf("GRANT CREATE ON DATABASE %s TO %s;", l.DatabaseIdent, l.NameIdent)
		},
		By: "the database's owner",
	}
}

// OwnSchema is ownership of schema when it exists (a command that drops it and makes it
// again needs it); a schema that does not exist asks nothing.
func OwnSchema(schema string) Need {
	return Need{
		What: func(*Login) string { return "ownership of schema " + Ident(schema) },
		Why:  "to drop the schema it finds and build it again",
		Holds: fmt.Sprintf("NOT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = %s AND NOT pg_has_role(nspowner, 'USAGE'))",
			literal(schema)),
		Grant: func(l *Login) string { return fmt.Sprintf("ALTER SCHEMA %s OWNER TO %s;", Ident(schema), l.NameIdent) },
		By:    "the schema's owner",
	}
}

// UseSchema is USAGE on schema, when it exists (a command that finds none says so itself).
func UseSchema(schema string) Need {
	return Need{
		What: func(*Login) string { return "USAGE on schema " + Ident(schema) },
		Why:  "to reach its tables and functions",
		Holds: fmt.Sprintf("to_regnamespace(%[1]s) IS NULL OR has_schema_privilege(to_regnamespace(%[1]s), 'USAGE')",
			literal(Ident(schema))),
		Grant: func(l *Login) string {
			return fmt.Sprintf("GRANT USAGE ON SCHEMA %s TO %s;", Ident(schema), l.NameIdent)
		},
		By: "the schema's owner",
	}
}

// OnTables is, on the tables of schema, the privileges privs names per table (SELECT,
// INSERT, UPDATE, DELETE); a table that does not exist asks nothing. Grant gives all four
// on every table of the schema: more than the least, in one statement that works.
func OnTables(schema, why string, privs map[string][]string) Need {
	var pairs, all []string
	for _, t := range slices.Sorted(maps.Keys(privs)) {
		for _, p := range privs[t] {
			pairs = append(pairs, fmt.Sprintf("(%s, %s)", literal(t), literal(p)))
			if !slices.Contains(all, p) {
				all = append(all, p)
			}
		}
	}
	order := []string{"SELECT", "INSERT", "UPDATE", "DELETE"}
	slices.SortFunc(all, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) })
	return Need{
		What: func(*Login) string { return strings.Join(all, ", ") + " on the tables of schema " + Ident(schema) },
		Why:  why,
		// By oid, not by name: a name of a schema without USAGE does not resolve.
		Holds: fmt.Sprintf(`NOT EXISTS (SELECT 1 FROM (VALUES %s) v(t, p)
			JOIN pg_class c ON c.relname = v.t AND c.relnamespace = to_regnamespace(%s)
			WHERE NOT has_table_privilege(c.oid, v.p))`, strings.Join(pairs, ", "), literal(Ident(schema))),
		Grant: func(l *Login) string {
			return fmt.Sprintf("GRANT %s ON ALL TABLES IN SCHEMA %s TO %s;", strings.Join(order, ", "), Ident(schema), l.NameIdent)
		},
		By: "the schema's owner",
	}
}

// ExecuteFunctions is EXECUTE on every function of schema.
func ExecuteFunctions(schema string) Need {
	return Need{
		What: func(*Login) string { return "EXECUTE on every function of schema " + Ident(schema) },
		Why:  "to run its server-side transactions",
		Holds: fmt.Sprintf(`NOT EXISTS (SELECT 1 FROM pg_proc WHERE pronamespace = to_regnamespace(%s)
			AND NOT has_function_privilege(oid, 'EXECUTE'))`, literal(Ident(schema))),
		Grant: func(l *Login) string {
			return fmt.Sprintf("GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA %s TO %s;", Ident(schema), l.NameIdent)
		},
		By: "the functions' owner",
	}
}

// CreateTable is CREATE on the session's current schema, where a command makes a table of
// its own (drill's ledger, dropped and made again each run).
func CreateTable(table string) Need {
	return Need{
		What:  func(l *Login) string { return "CREATE on schema " + l.SchemaIdent },
		Why:   "to create table " + table,
		Holds: "current_schema() IS NOT NULL AND has_schema_privilege(current_schema(), 'CREATE')",
		Grant: func(l *Login) string {
			return fmt.Sprintf("GRANT CREATE ON SCHEMA %s TO %s;", l.SchemaIdent, l.NameIdent)
		},
		By: "the schema's owner",
	}
}

// CreateTableIfMissing is CreateTable unless table already exists (a command that makes
// its table only when it finds none: stress --init).
func CreateTableIfMissing(table string) Need {
	n := CreateTable(table)
	n.Holds = fmt.Sprintf("to_regclass(%s) IS NOT NULL OR %s", literal(table), n.Holds)
	return n
}

// OnTable is privs on table (a name the session's search path finds) when it exists; a
// table that does not exist asks nothing (CreateTable asks for what makes it).
func OnTable(table, why string, privs ...string) Need {
	list := make([]string, len(privs))
	for i, p := range privs {
		list[i] = literal(p)
	}
	return Need{
		What: func(*Login) string { return strings.Join(privs, ", ") + " on table " + table },
		Why:  why,
		Holds: fmt.Sprintf("to_regclass(%[1]s) IS NULL OR NOT EXISTS (SELECT 1 FROM unnest(ARRAY[%[2]s]) p WHERE NOT has_table_privilege(to_regclass(%[1]s), p))",
			literal(table), strings.Join(list, ", ")),
		Grant: func(l *Login) string {
			return fmt.Sprintf("GRANT %s ON %s TO %s;", strings.Join(privs, ", "), table, l.NameIdent)
		},
		By: "the table's owner",
	}
}

// OwnTable is ownership of table when it exists (a command that drops it and makes it
// again needs it).
func OwnTable(table string) Need {
	return Need{
		What: func(*Login) string { return "ownership of table " + table },
		Why:  "to drop it and make it again",
		Holds: fmt.Sprintf("to_regclass(%[1]s) IS NULL OR pg_has_role((SELECT relowner FROM pg_class WHERE oid = to_regclass(%[1]s)), 'USAGE')",
			literal(table)),
		Grant: func(l *Login) string { return fmt.Sprintf("ALTER TABLE %s OWNER TO %s;", table, l.NameIdent) },
		By:    "the table's owner",
	}
}
