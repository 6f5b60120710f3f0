package privilege

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// stateInsufficientPrivilege is the SQLSTATE of "permission denied" (insufficient_privilege).
const stateInsufficientPrivilege = "42501"

// Denied is the refusal of statement query, which the server refused for want of a
// privilege (SQLSTATE 42501, err wrapping it): the login, what it may not do, the server's
// message and, where the catalogue shows what the login lacks, the GRANT that allows it; ""
// for any other error. c is a session of the same login on the server that refused.
//
// The server's message is shown as it is, never read: under any lc_messages it is the
// SQLSTATE that says a privilege is missing, and the catalogue that says which. Of the
// objects the statement names (sqlNames), the first one lacking what the statement asks of
// it is granted, in the order the server checks them: a schema that qualifies a name
// (USAGE, at parse), the relations (the verb's privilege on its target, SELECT on those it
// reads), the functions it calls (EXECUTE), the sequences it draws from (USAGE).
func Denied(ctx context.Context, c *pgx.Conn, what, query string, err error) string {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != stateInsufficientPrivilege {
		return ""
	}
	l, lerr := ReadLogin(ctx, c)
	if lerr != nil {
		return ""
	}
	out := fmt.Sprintf("the login %s (%s) may not %s: %s", l.Name, l.Role(), what, pe.Message)
	if grant := grantFor(ctx, c, parseNames(query)); grant != "" {
		out += "; as a superuser or its owner, run on the primary: " + grant + " TO " + l.NameIdent + ";"
	}
	return out
}

// grantFor is the GRANT (without its grantee) of the first object of n that the session's
// login lacks a privilege on, or "" when the catalogue shows none (or cannot be read).
func grantFor(ctx context.Context, c *pgx.Conn, n sqlNames) string {
	for _, find := range []func(context.Context, *pgx.Conn, sqlNames) (string, error){
		schemaGrant, relationGrant, functionGrant, sequenceGrant,
	} {
		if g, err := find(ctx, c, n); err != nil || g != "" {
			return g
		}
	}
	return ""
}

// schemaGrant grants USAGE on the first schema n names that the login may not use.
func schemaGrant(ctx context.Context, c *pgx.Conn, n sqlNames) (string, error) {
	if len(n.schemas) == 0 {
		return "", nil
	}
	return firstOf(ctx, c, `SELECT 'GRANT USAGE ON SCHEMA ' || quote_ident(s.nspname)
		FROM unnest($1::text[]) WITH ORDINALITY u(name, i) JOIN pg_namespace s ON s.nspname = u.name
		WHERE NOT has_schema_privilege(s.oid, 'USAGE') ORDER BY u.i LIMIT 1`, n.schemas)
}

// resolveRelation is the SQL that finds a relation u.s.u.r as the server does: in schema
// u.s when the name is qualified, else first on the session's search path.
const resolveRelation = `CROSS JOIN LATERAL (SELECT c.oid, c.relkind, quote_ident(s.nspname) || '.' || quote_ident(c.relname) AS qualified
		FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
		WHERE c.relname = u.r AND (u.s <> '' AND s.nspname = u.s OR u.s = '' AND s.nspname = ANY (current_schemas(true)))
		ORDER BY array_position(current_schemas(true), s.nspname) LIMIT 1) rel`

// relationGrant grants what the first relation n names lacks of what the statement asks of
// it: the verb's privilege on its target (and SELECT where it reads the target too), SELECT
// on every other.
func relationGrant(ctx context.Context, c *pgx.Conn, n sqlNames) (string, error) {
	var schemas, names, privs []string
	for _, r := range n.relations {
		schemas, names = append(schemas, r.schema), append(names, r.name)
		privs = append(privs, strings.Join(n.asks(r), ","))
	}
	if len(names) == 0 {
		return "", nil
	}
	return firstOf(ctx, c, `SELECT 'GRANT ' || array_to_string(lacks, ', ') || ' ON ' || rel.qualified
		FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY u(s, r, privs, i) `+resolveRelation+`
		CROSS JOIN LATERAL (SELECT array(SELECT p FROM unnest(string_to_array(u.privs, ',')) p
			WHERE NOT has_table_privilege(rel.oid, p)) AS lacks) l
		WHERE rel.relkind <> 'S' AND cardinality(lacks) > 0 ORDER BY u.i LIMIT 1`, schemas, names, privs)
}

// asks are the privileges the statement asks of relation r.
func (n sqlNames) asks(r sqlName) []string {
	if r != n.target {
		return []string{"SELECT"}
	}
	p := []string{strings.ToUpper(n.verb)}
	if n.reads && n.verb != "insert" || n.returns {
		p = append([]string{"SELECT"}, p...)
	}
	return p
}

// functionGrant grants EXECUTE on the first function n calls that the login may not run.
func functionGrant(ctx context.Context, c *pgx.Conn, n sqlNames) (string, error) {
	var schemas, names []string
	for _, f := range n.functions {
		schemas, names = append(schemas, f.schema), append(names, f.name)
	}
	if len(names) == 0 {
		return "", nil
	}
	return firstOf(ctx, c, `SELECT 'GRANT EXECUTE ON ' || CASE p.prokind WHEN 'p' THEN 'PROCEDURE ' ELSE 'FUNCTION ' END || p.oid::regprocedure::text
		FROM unnest($1::text[], $2::text[]) WITH ORDINALITY u(s, f, i) JOIN pg_proc p ON p.proname = u.f
		JOIN pg_namespace s ON s.oid = p.pronamespace
		WHERE (u.s <> '' AND s.nspname = u.s OR u.s = '' AND s.nspname = ANY (current_schemas(true)))
		AND NOT has_function_privilege(p.oid, 'EXECUTE') ORDER BY u.i LIMIT 1`, schemas, names)
}

// sequenceGrant grants USAGE and SELECT on the first sequence the statement draws from
// that the login may not use: one a literal names (nextval('s')), or the serial default
// of the table it inserts into.
func sequenceGrant(ctx context.Context, c *pgx.Conn, n sqlNames) (string, error) {
	var schemas, names []string
	for _, lit := range n.literals {
		if r, ok := literalName(lit); ok {
			schemas, names = append(schemas, r.schema), append(names, r.name)
		}
	}
	target := []string{n.target.schema, n.target.name}
	if n.verb != "insert" {
		target = []string{"", ""}
	}
	// CASE: has_sequence_privilege fails on any other relation, and the planner may call it
	// before the joins have left only sequences.
	return firstOf(ctx, c, `WITH named AS (SELECT rel.oid, rel.relkind, rel.qualified, u.i FROM unnest($1::text[], $2::text[]) WITH ORDINALITY u(s, r, i) `+resolveRelation+`
		UNION ALL SELECT d.objid, q.relkind, quote_ident(s.nspname) || '.' || quote_ident(q.relname), 0
		FROM unnest($3::text[], $4::text[]) u(s, r) `+resolveRelation+`
		JOIN pg_depend d ON d.refobjid = rel.oid AND d.refclassid = 'pg_class'::regclass AND d.classid = 'pg_class'::regclass AND d.deptype = 'a'
		JOIN pg_class q ON q.oid = d.objid JOIN pg_namespace s ON s.oid = q.relnamespace)
		SELECT 'GRANT USAGE, SELECT ON SEQUENCE ' || qualified FROM named
		WHERE CASE WHEN relkind = 'S' THEN NOT has_sequence_privilege(oid, 'USAGE') ELSE false END ORDER BY i LIMIT 1`,
		schemas, names, target[:1], target[1:])
}

// literalName reads a string literal as a relation's name, as nextval reads it: a bare
// name folded to lower case, a quoted one as written, maybe qualified by a schema.
func literalName(lit string) (sqlName, bool) {
	toks := sqlTokens(lit)
	if len(toks) == 0 || !isWordStart(toks[0][0]) && toks[0][0] != '"' {
		return sqlName{}, false
	}
	r, next := qualifiedName(toks, 0)
	return r, next == len(toks)
}

// firstOf is the one text query returns, "" when it returns no row.
func firstOf(ctx context.Context, c *pgx.Conn, query string, args ...any) (string, error) {
	rows, err := c.Query(ctx, query, args...)
	if err != nil {
		return "", err
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(got) == 0 {
		return "", err
	}
	return got[0], nil
}
