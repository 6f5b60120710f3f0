package tpcc

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/agerr"
)

// Meta is what tpcc_meta records about a build.
type Meta struct {
	Version    int
	State      string
	Warehouses int
	Seed       uint64
	C          Constants
}

// Errors of a database that is not in the state a command needs. Each is returned wrapped
// as bad input with a message naming the database and what to do.
var (
	ErrNotBuilt     = errors.New("no tpcc schema")
	ErrHalfBuilt    = errors.New("the tpcc schema is half-built")
	ErrForeign      = errors.New("schema tpcc exists but was not made by this agbench")
	ErrAlreadyBuilt = errors.New("the tpcc schema is already built")
)

// ReadMeta reports the state of the workload's schema in conn's database: nil, nil when
// there is none; ErrForeign (bad input) when schema tpcc exists without a readable tpcc_meta
// of this version.
func ReadMeta(ctx context.Context, conn *pgx.Conn) (*Meta, error) {
	var hasSchema, hasMeta bool
	err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1),
		to_regclass($2) IS NOT NULL`, Schema, Schema+".tpcc_meta").Scan(&hasSchema, &hasMeta)
	if err != nil {
		return nil, err
	}
	if !hasSchema {
		return nil, nil
	}
	db := conn.Config().Database
	if !hasMeta {
		return nil, agerr.BadInputf("database %s: %w (it has no tpcc_meta table); drop it yourself or choose another database", db, ErrForeign)
	}
	var m Meta
	var seed int64
	err = conn.QueryRow(ctx, `SELECT version, state, warehouses, seed, c_last, c_id, ol_i_id FROM tpcc.tpcc_meta`).
		Scan(&m.Version, &m.State, &m.Warehouses, &seed, &m.C.CLast, &m.C.CID, &m.C.OLIID)
	if errors.Is(err, pgx.ErrNoRows) {
		// The build was cut short between creating the table and recording itself.
		return &Meta{Version: SchemaVersion, State: StateBuilding}, nil
	}
	if err != nil {
		return nil, agerr.BadInputf("database %s: %w (tpcc_meta unreadable: %v); drop it with agbench tpcc drop", db, ErrForeign, err)
	}
	m.Seed = uint64(seed)
	if m.Version != SchemaVersion {
		return nil, agerr.BadInputf("database %s: %w (schema version %d, this agbench builds %d); run agbench tpcc drop --force, then build",
			db, ErrForeign, m.Version, SchemaVersion)
	}
	return &m, nil
}

// RequireReady returns the build's metadata, or bad input saying why the database cannot be
// used yet (not built, or half-built by an interrupted build).
func RequireReady(ctx context.Context, conn *pgx.Conn) (*Meta, error) {
	m, err := ReadMeta(ctx, conn)
	if err != nil {
		return nil, err
	}
	db := conn.Config().Database
	if m == nil {
		return nil, agerr.BadInputf("database %s: %w; run agbench tpcc build first", db, ErrNotBuilt)
	}
	if m.State != StateReady {
		return nil, agerr.BadInputf("database %s: %w (a build was interrupted); run agbench tpcc drop or build again", db, ErrHalfBuilt)
	}
	return m, nil
}

// Drop removes the workload's schema and everything in it; it reports whether there was one.
// It refuses (bad input) a schema tpcc that this agbench did not make, unless force.
func Drop(ctx context.Context, conn *pgx.Conn, force bool) (bool, error) {
	m, err := ReadMeta(ctx, conn)
	if err != nil && !(force && errors.Is(err, ErrForeign)) {
		return false, err
	}
	if m == nil && err == nil {
		return false, nil
	}
	if _, err := conn.Exec(ctx, `DROP SCHEMA `+Schema+` CASCADE`); err != nil {
		return false, fmt.Errorf("drop schema %s: %w", Schema, err)
	}
	return true, nil
}
