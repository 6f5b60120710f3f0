// Package pgops holds what the SQL workloads (stress, scan) share: running a prepared
// statement while streaming its rows and counting rows and bytes received, and the server's
// buffer counters (pg_stat_database) summed over nodes, read before and after a step.
//
// It imports pgx and internal/workload only; it must not import the runner, the cluster,
// the listener or the report.
package pgops

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// BlockSize is PostgreSQL's default page size, used to turn buffer counts into bytes.
const BlockSize = 8192

// WorkerAppName is the application_name of workload sessions, so that a step can wait for
// them to end (and flush their statistics) before reading the server's counters.
const WorkerAppName = "agbench-worker"

// Run executes a prepared statement with text parameters, streaming the result, and returns
// the rows and bytes (column values as sent) received.
func Run(ctx context.Context, c *pgconn.PgConn, stmt string, params [][]byte) (rows, bytes int64, err error) {
	rr := c.ExecPrepared(ctx, stmt, params, nil, nil)
	for rr.NextRow() {
		rows++
		for _, v := range rr.Values() {
			bytes += int64(len(v))
		}
	}
	_, err = rr.Close()
	return rows, bytes, err
}

// Counters are a server's cumulative block counters for one database.
type Counters struct {
	Hits, Reads int64
}

// ReadCounters sums blks_hit and blks_read of the current database on every node given.
func ReadCounters(ctx context.Context, conns []*pgx.Conn) (Counters, error) {
	var sum Counters
	for _, c := range conns {
		var h, r int64
		err := c.QueryRow(ctx, `SELECT blks_hit, blks_read FROM pg_stat_database WHERE datname = current_database()`).Scan(&h, &r)
		if err != nil {
			return sum, fmt.Errorf("read buffer counters: %w", err)
		}
		sum.Hits += h
		sum.Reads += r
	}
	return sum, nil
}

// WaitWorkersGone waits (up to timeout) until no session named WorkerAppName is left on
// the nodes: ended sessions flush their statistics as they exit.
func WaitWorkersGone(ctx context.Context, conns []*pgx.Conn, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for _, c := range conns {
		for time.Now().Before(deadline) {
			var n int
			if err := c.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, WorkerAppName).Scan(&n); err != nil || n == 0 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		// A fresh snapshot of the statistics for the next read.
		c.Exec(ctx, `SELECT pg_stat_clear_snapshot()`)
	}
}

// StepCounters turns counters read before and after a step into a step's counters.
func StepCounters(before, after Counters, seconds float64) map[string]float64 {
	hits, reads := float64(after.Hits-before.Hits), float64(after.Reads-before.Reads)
	m := map[string]float64{"buffer_hits": hits, "buffer_reads": reads}
	if seconds > 0 {
		m["server_mb_per_s"] = (hits + reads) * BlockSize / 1e6 / seconds
	}
	return m
}
