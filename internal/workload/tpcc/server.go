package tpcc

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/agerr"
)

// CheckCapacity fails with bad input when the server cannot accept need more connections
// (own of them agbench's own, its samplers): max_connections less the sessions already there
// and, unless the user may take them, the slots reserved for superusers
// (superuser_reserved_connections) and for pg_use_reserved_connections (reserved_connections,
// PostgreSQL 16 and later). flag names what asked for them.
func CheckCapacity(ctx context.Context, conn *pgx.Conn, need, own int, flag string) error {
	var maxConn, superReserved, roleReserved, used int
	err := conn.QueryRow(ctx, `SELECT current_setting('max_connections')::int,
		CASE WHEN r.rolsuper THEN 0 ELSE current_setting('superuser_reserved_connections')::int END,
		CASE WHEN r.rolsuper OR EXISTS (SELECT FROM pg_roles u WHERE u.rolname = 'pg_use_reserved_connections'
			AND pg_has_role(current_user, u.oid, 'member')) THEN 0
			ELSE coalesce(current_setting('reserved_connections', true), '0')::int END,
		(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')::int
		FROM pg_roles r WHERE r.rolname = current_user`).Scan(&maxConn, &superReserved, &roleReserved, &used)
	if err != nil {
		return fmt.Errorf("read max_connections: %w", err)
	}
	// This session is counted in used, and is closed before the run needs its slot.
	free := maxConn - superReserved - roleReserved - used + 1
	if need > free {
		return agerr.BadInputf("%s: needs %d connections to the primary (%d of them agbench's own), which accepts %d more "+
			"(max_connections %d, %d reserved that this user may not use, %d in use); lower it or raise max_connections",
			flag, need, own, max(free, 0), maxConn, superReserved+roleReserved, used-1)
	}
	return nil
}
