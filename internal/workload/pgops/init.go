package pgops

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// InitRowBytes is roughly the width of a row made by InitTable (close to a TPC-C customer
// row's ~650 bytes on disk with its header).
const InitRowBytes = 500

// InitTable makes a simple table of rows rows for the read workloads until a real schema
// (agbench tpcc build) is there: c_id bigint primary key and text columns of ~500 bytes in
// all. An existing table is left as it is; created says whether it was made.
func InitTable(ctx context.Context, c *pgx.Conn, table string, rows int64) (created bool, err error) {
	var exists bool
	if err := c.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, table).Scan(&exists); err != nil {
		return false, fmt.Errorf("init %s: %w", table, err)
	}
	if exists {
		return false, nil
	}
	id := pgx.Identifier{table}.Sanitize()
	tx, err := c.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	stmts := []string{
		`CREATE TABLE ` + id + ` (c_id bigint PRIMARY KEY, c_first text, c_last text, c_balance numeric(12,2), c_data text)`,
		fmt.Sprintf(`INSERT INTO %s SELECT g, md5(g::text), md5((g + 1)::text), (g %% 10000) / 100.0,
			repeat(md5((g * 7)::text), 13) FROM generate_series(1, %d) g`, id, rows),
	}
	for _, s := range stmts {
		if _, err := tx.Exec(ctx, s); err != nil {
			return false, fmt.Errorf("init %s: %w", table, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return false, err
	}
	if _, err := c.Exec(ctx, `VACUUM ANALYZE `+id); err != nil {
		return true, fmt.Errorf("init %s: %w", table, err)
	}
	return true, nil
}
