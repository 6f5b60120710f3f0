package readahead

import (
	"context"
	"os"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/sample"
)

// ioCounters are cumulative read counters: operations, bytes and time.
type ioCounters struct {
	Ops, Bytes int64
	Ms         float64
}

func (c ioCounters) sub(o ioCounters) ioCounters {
	return ioCounters{Ops: c.Ops - o.Ops, Bytes: c.Bytes - o.Bytes, Ms: c.Ms - o.Ms}
}

// pgStatIOSQL sums pg_stat_io's reads of relations over every backend type and context
// (PostgreSQL 16 and 17 count pages of op_bytes; 18 counts operations of read_bytes).
func pgStatIOSQL(versionNum int) string {
	bytes := "reads * op_bytes"
	if versionNum >= 180000 {
		bytes = "read_bytes"
	}
	return `SELECT coalesce(sum(reads), 0)::bigint, coalesce(sum(` + bytes + `), 0)::bigint, coalesce(sum(read_time), 0)::float8
		FROM pg_stat_io WHERE object = 'relation'`
}

// readPgStatIO makes the session's own pending statistics visible (they are flushed when
// the session goes idle, at most once a second unless forced) and reads pg_stat_io.
func readPgStatIO(ctx context.Context, c *pgx.Conn, versionNum int) (ioCounters, error) {
	if _, err := c.Exec(ctx, "SELECT pg_stat_force_next_flush()"); err != nil {
		return ioCounters{}, err
	}
	if _, err := c.Exec(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
		return ioCounters{}, err
	}
	var v ioCounters
	err := c.QueryRow(ctx, pgStatIOSQL(versionNum)).Scan(&v.Ops, &v.Bytes, &v.Ms)
	return v, err
}

// readDevice reads one device's read counters from /proc/diskstats.
func readDevice(name string) (ioCounters, error) {
	b, err := os.ReadFile("/proc/diskstats")
	if err != nil {
		return ioCounters{}, err
	}
	m, err := sample.ParseDiskstats(b)
	if err != nil {
		return ioCounters{}, err
	}
	d, ok := m[name]
	if !ok {
		return ioCounters{}, os.ErrNotExist
	}
	return ioCounters{Ops: int64(d.Reads), Bytes: int64(d.SectorsRead * sample.SectorBytes), Ms: float64(d.ReadMs)}, nil
}
