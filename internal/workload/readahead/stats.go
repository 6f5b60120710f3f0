package readahead

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/proc"
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
	m, err := proc.Host.Diskstats()
	if err != nil {
		return ioCounters{}, err
	}
	d, ok := m[name]
	if !ok {
		return ioCounters{}, os.ErrNotExist
	}
	return ioCounters{Ops: int64(d.Reads), Bytes: int64(d.SectorsRead * proc.SectorBytes), Ms: float64(d.ReadMs)}, nil
}

// Settling the private device: how often it is polled, and how long it may stay busy.
const (
	settlePoll    = 2 * time.Millisecond
	settleQuiet   = 10 * time.Millisecond
	settleTimeout = 30 * time.Second
)

// settledDevice returns the device's read counters once no read is in flight and none has
// completed for quiet. /proc/diskstats counts a read when it completes, and a query returns
// while the kernel's read-ahead it started may still be in flight (on a busy disk, for tens
// of milliseconds); read before that read lands, the counters would leave it out of the run
// that caused it and put it in the next. Reads held back by a blkio throttle are not yet in
// flight, which is why the counter must also stay still for quiet (the caller passes more
// than the throttle's interval). Only the private device is settled: nothing but the
// experiment reads it, so it does go quiet.
func settledDevice(ctx context.Context, name string, quiet time.Duration) (ioCounters, error) {
	deadline := time.Now().Add(settleTimeout)
	last, err := readDevice(name)
	if err != nil {
		return ioCounters{}, err
	}
	still := time.Now()
	for {
		n, err := proc.Host.ReadsInFlight(name)
		if err != nil {
			return ioCounters{}, err
		}
		if n == 0 && time.Since(still) >= quiet {
			return last, nil
		}
		if time.Now().After(deadline) {
			return ioCounters{}, fmt.Errorf("device %s still reading after %s (%d reads in flight): its reads cannot be told apart from the next run's", name, settleTimeout, n)
		}
		select {
		case <-ctx.Done():
			return ioCounters{}, ctx.Err()
		case <-time.After(settlePoll):
		}
		cur, err := readDevice(name)
		if err != nil {
			return ioCounters{}, err
		}
		if cur != last {
			last, still = cur, time.Now()
		}
	}
}
