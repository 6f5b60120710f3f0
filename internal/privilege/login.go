package privilege

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Login is what a session's login is and holds, as the server says.
type Login struct {
	// Name is the login (current_user); NameIdent, DatabaseIdent and SchemaIdent are it,
	// the session's database and its current schema ("public" when its search path names
	// none that exists) quoted as identifiers by the server, for the statements to run.
	Name, NameIdent, DatabaseIdent, SchemaIdent string
	// Superuser, Replication: rolsuper and rolreplication.
	Superuser, Replication bool
	// Monitor and ReadAllStats: the login has the privileges of pg_monitor and of
	// pg_read_all_stats (which pg_monitor includes; a superuser has both).
	Monitor, ReadAllStats bool
}

// ReadLogin reads the session's login and what it holds.
func ReadLogin(ctx context.Context, c *pgx.Conn) (*Login, error) {
	var l Login
	err := c.QueryRow(ctx, `SELECT current_user::text, quote_ident(current_user), quote_ident(current_database()),
		quote_ident(coalesce(current_schema(), 'public')), r.rolsuper, r.rolreplication,
		pg_has_role(current_user, 'pg_monitor', 'USAGE'), pg_has_role(current_user, 'pg_read_all_stats', 'USAGE')
		FROM pg_roles r WHERE r.rolname = current_user`).Scan(&l.Name, &l.NameIdent, &l.DatabaseIdent, &l.SchemaIdent,
		&l.Superuser, &l.Replication, &l.Monitor, &l.ReadAllStats)
	if err != nil {
		return nil, fmt.Errorf("read the login's privileges: %w", err)
	}
	return &l, nil
}

// Role names what the login is, for messages: "superuser", "pg_monitor",
// "pg_read_all_stats" or "plain login".
func (l *Login) Role() string {
	switch {
	case l.Superuser:
		return "superuser"
	case l.Monitor:
		return "pg_monitor"
	case l.ReadAllStats:
		return "pg_read_all_stats"
	}
	return "plain login"
}
