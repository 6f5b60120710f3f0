package privilege

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// stateInsufficientPrivilege is the SQLSTATE of "permission denied".
const stateInsufficientPrivilege = "42501"

// deniedRE reads the object out of the server's "permission denied for <kind> <name>" (its
// English messages: under another lc_messages the refusal keeps the server's message and
// names no statement).
var deniedRE = regexp.MustCompile(`^permission denied for (schema|table|view|materialized view|sequence|function|procedure) (\S+)$`)

// Denied is the refusal of a statement the server refused for want of a privilege (42501,
// err wrapping it): the login, what it may not do and, where the message names the object,
// the GRANT that allows a read of it; "" for any other error. c is a session of the same
// login on the server that refused, which names the object exactly (the server's message
// leaves a table's schema out).
func Denied(ctx context.Context, c *pgx.Conn, what string, err error) string {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != stateInsufficientPrivilege {
		return ""
	}
	l, lerr := ReadLogin(ctx, c)
	if lerr != nil {
		return ""
	}
	out := fmt.Sprintf("the login %s (%s) may not %s: %s", l.Name, l.Role(), what, pe.Message)
	if grant := grantFor(ctx, c, l, pe.Message); grant != "" {
		out += "; as a superuser or its owner, run on the primary: " + grant
	}
	return out
}

// grantFor is the statement that gives l what message says it lacks, for a read: USAGE on
// a schema, SELECT on a table or view, USAGE and SELECT on a sequence, EXECUTE on a
// function; "" when message names none.
func grantFor(ctx context.Context, c *pgx.Conn, l *Login, message string) string {
	m := deniedRE.FindStringSubmatch(message)
	if m == nil {
		return ""
	}
	kind, name := m[1], m[2]
	switch kind {
	case "schema":
		return fmt.Sprintf("GRANT USAGE ON SCHEMA %s TO %s;", Ident(name), l.NameIdent)
	case "function", "procedure":
		return fmt.Sprintf("GRANT EXECUTE ON %s %s TO %s;", map[string]string{"function": "FUNCTION", "procedure": "PROCEDURE"}[kind], name, l.NameIdent)
	}
	// The one relation of that name the login may not read, named with its schema.
	var qualified []string
	rows, err := c.Query(ctx, `SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname = $1 AND NOT has_table_privilege(c.oid, 'SELECT')`, name)
	if err == nil {
		qualified, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil || len(qualified) != 1 {
		return ""
	}
	if kind == "sequence" {
		return fmt.Sprintf("GRANT USAGE, SELECT ON SEQUENCE %s TO %s;", qualified[0], l.NameIdent)
	}
	return fmt.Sprintf("GRANT SELECT ON %s TO %s;", qualified[0], l.NameIdent)
}
