package tpcc

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/agerr"
)

// ConnConfig parses a connection string (libpq keyword/value or URL) and sets the session
// up for the workload: the search path to the workload's schema and an application name.
// A connection string that does not parse is bad input; flag names the flag it came from.
func ConnConfig(connString, flag string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(connString)
	if err != nil {
		return nil, agerr.BadInputf("%s: not a connection string: %v", flag, err)
	}
	cfg.RuntimeParams["search_path"] = Schema
	if cfg.RuntimeParams["application_name"] == "" || cfg.RuntimeParams["application_name"] == "agbench" {
		cfg.RuntimeParams["application_name"] = defaultAppName
	}
	return cfg, nil
}

// defaultAppName is the application_name of the workload's sessions when the connection
// string gave none.
const defaultAppName = "agbench-tpcc"

// Connect opens one connection with cfg and installs the workload's type codecs.
func Connect(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	RegisterTypes(conn)
	return conn, nil
}
