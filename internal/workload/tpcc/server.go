package tpcc

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/result"
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

// ServerInfo describes the server for the result: version and the settings that matter.
func ServerInfo(ctx context.Context, conn *pgx.Conn) *result.Server {
	s := &result.Server{Settings: map[string]string{}}
	_ = conn.QueryRow(ctx, "SELECT version(), current_setting('server_version_num')::int").Scan(&s.Version, &s.VersionNum)
	rows, err := conn.Query(ctx, `SELECT name, setting || coalesce(unit, '') FROM pg_settings WHERE name = ANY($1)`,
		[]string{"shared_buffers", "max_connections", "synchronous_commit", "synchronous_standby_names", "fsync",
			"wal_level", "max_wal_size", "checkpoint_timeout", "work_mem", "effective_io_concurrency"})
	if err != nil {
		return s
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if rows.Scan(&k, &v) == nil {
			s.Settings[k] = v
		}
	}
	return s
}
