package seed

import (
	"context"
	"fmt"

	"github.com/agbench/agbench/internal/cluster"
)

// DataTable is the table InitData fills.
const DataTable = "agbench_seed_data"

// initBatchRows is how many rows one INSERT of InitData adds (about 50 MB).
const initBatchRows = 200000

// Each row of DataTable mixes 64 random bytes (four random UUIDs: incompressible) with
// about 130 bytes of repetitive text drawn from a few hundred phrases (compressible, as
// names, states and descriptions in real tables are), plus the row's header and id. Values
// stay far under TOAST's 2 kB threshold, so PostgreSQL stores them uncompressed and the
// seeding's compression meets them as they are. RandomShare is the random bytes' share of
// a row's bytes on disk (64 of about 230 bytes with header and line pointer).
const RandomShare = 0.28

const initTableSQL = `CREATE TABLE IF NOT EXISTS ` + DataTable + ` (
	id bigint PRIMARY KEY,
	rnd bytea NOT NULL,
	txt text NOT NULL)`

const initInsertSQL = `INSERT INTO ` + DataTable + `
SELECT g,
	uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()),
	'order ' || (g % 997) || ' for customer ' || (g % 331) || ' shipped from warehouse ' || (g % 17) ||
		' by carrier ' || (g % 7) || ': status delivered, payment settled, no further action required'
FROM generate_series($1::bigint, $2::bigint) g`

// InitData grows the cluster's database to about size bytes (pg_database_size) by adding
// rows to DataTable, and returns the size reached. A database already that large is left
// as it is. progress, when set, gets the size after each batch.
func InitData(ctx context.Context, topo *cluster.Topology, size int64, progress func(done, target int64)) (int64, error) {
	c, err := topo.Connect(ctx, topo.Primary())
	if err != nil {
		return 0, err
	}
	defer c.Close(context.WithoutCancel(ctx))
	if _, err := c.Exec(ctx, `SET synchronous_commit = off`); err != nil {
		return 0, err
	}
	if _, err := c.Exec(ctx, initTableSQL); err != nil {
		return 0, fmt.Errorf("create %s: %w", DataTable, err)
	}
	for {
		var cur, next int64
		if err := c.QueryRow(ctx, `SELECT pg_database_size(current_database()), coalesce((SELECT max(id) FROM `+DataTable+`), 0) + 1`).
			Scan(&cur, &next); err != nil {
			return 0, err
		}
		if progress != nil {
			progress(cur, size)
		}
		if cur >= size {
			_, err := c.Exec(ctx, `VACUUM (ANALYZE) `+DataTable)
			return cur, err
		}
		rows := int64(initBatchRows)
		if left := (size - cur) / 230; left < rows {
			rows = max(left, 1000)
		}
		if _, err := c.Exec(ctx, initInsertSQL, next, next+rows-1); err != nil {
			return cur, fmt.Errorf("fill %s: %w", DataTable, err)
		}
	}
}
