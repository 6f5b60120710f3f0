package tpcc

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/agerr"
)

// CheckCapacity fails with bad input when the server cannot accept need more connections:
// max_connections less the sessions already there (and the reserved ones, unless the user is
// a superuser). flag names what asked for them.
func CheckCapacity(ctx context.Context, conn *pgx.Conn, need int, flag string) error {
	var maxConn, reserved, used int
	var super bool
	err := conn.QueryRow(ctx, `SELECT current_setting('max_connections')::int,
		current_setting('superuser_reserved_connections')::int,
		(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')::int,
		(SELECT rolsuper FROM pg_roles WHERE rolname = current_user)`).Scan(&maxConn, &reserved, &used, &super)
	if err != nil {
		return fmt.Errorf("read max_connections: %w", err)
	}
	free := maxConn - used
	if !super {
		free -= reserved
	}
	// This session is counted in used, and is closed before the run needs its slot.
	free++
	if need > free {
		return agerr.BadInputf("%s: needs %d connections to the primary, which accepts %d more (max_connections %d, %d in use); lower it or raise max_connections",
			flag, need, free, maxConn, used-1)
	}
	return nil
}
