package sample

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/result"
)

// pgCounters is one reading of a node's cumulative statistics.
type pgCounters struct {
	at                                    time.Time
	commits, rollbacks, blksRead, blksHit int64
	tempBytes, deadlocks                  int64
	blkReadMs, blkWriteMs                 float64
	inRecovery                            bool
	// lsn is the WAL position written (primary) or replayed (standby), in bytes.
	lsn                      int64
	checkpoints, ckptBuffers int64
	io                       *ioCounters
	// standbys are pg_stat_replication's rows the login may read; hiddenStandbys counts the
	// rows whose positions and lags are NULL to it (it lacks pg_read_all_stats).
	standbys       map[string]standbyState
	hiddenStandbys int
	// posAt is the middle of the reading's round trip, when lsn was read (zero: at).
	posAt time.Time
	// sinceReplay is, on a standby, the seconds since the commit time of the last
	// transaction it replayed (pg_last_xact_replay_timestamp()); nil when it replayed none
	// since it started, and on a primary. The primary's idle time is in it: it bounds a
	// lag, never measures one (lagBounds).
	sinceReplay *float64
}

// position is the reading's WAL position, for the node's history (positions.go).
func (c pgCounters) position() posRead {
	at := c.posAt
	if at.IsZero() {
		at = c.at
	}
	return posRead{at: at, lsn: c.lsn, inRecovery: c.inRecovery}
}

// ioCounters are pg_stat_io's sums over backend types, objects and contexts.
type ioCounters struct {
	reads, writes, fsyncs, readBytes, writeBytes int64
	readMs, writeMs, fsyncMs                     float64
}

// standbyState is one row of pg_stat_replication, on a primary, read by a login that may
// see its positions.
type standbyState struct {
	// seconds; nil when pg_stat_replication shows NULL, which is no measurement: before the
	// walsender's first lag sample (a standby just connected or reconnected), and once the
	// standby has caught up and no WAL has come for a while. Absent, never read as 0.
	writeLag, flushLag, replayLag *float64
	replayLSN, behind             int64 // replay position, and bytes behind the primary's WAL
	// sync is set when its sync_state is sync or quorum: the primary's commits wait for it.
	sync bool
	// sinceReply is the seconds since its last reply (pg_stat_replication.reply_time), and
	// unflushed the bytes of the primary's WAL it has not confirmed flushed.
	sinceReply float64
	unflushed  int64
}

const statsQuery = `SELECT coalesce(sum(xact_commit), 0)::bigint, coalesce(sum(xact_rollback), 0)::bigint,
  coalesce(sum(blks_read), 0)::bigint, coalesce(sum(blks_hit), 0)::bigint,
  coalesce(sum(temp_bytes), 0)::bigint, coalesce(sum(deadlocks), 0)::bigint,
  coalesce(sum(blk_read_time), 0)::float8, coalesce(sum(blk_write_time), 0)::float8,
  pg_is_in_recovery(),
  coalesce(pg_wal_lsn_diff(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END, '0/0'), 0)::bigint,
  CASE WHEN pg_is_in_recovery() THEN extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp())::float8 END
FROM pg_stat_database`

// Checkpoint counters moved from pg_stat_bgwriter to pg_stat_checkpointer in 17.
const (
	checkpointsQuery16 = `SELECT (checkpoints_timed + checkpoints_req)::bigint, buffers_checkpoint::bigint FROM pg_stat_bgwriter`
	checkpointsQuery17 = `SELECT (num_timed + num_requested)::bigint, buffers_written::bigint FROM pg_stat_checkpointer`
)

// pg_stat_io (16+) counts operations of op_bytes each in 16 and 17; 18 gives bytes instead.
const (
	ioQuery16 = `SELECT coalesce(sum(reads), 0)::bigint, coalesce(sum(writes), 0)::bigint, coalesce(sum(fsyncs), 0)::bigint,
  coalesce(sum(reads * op_bytes), 0)::bigint, coalesce(sum(writes * op_bytes), 0)::bigint,
  coalesce(sum(read_time), 0)::float8, coalesce(sum(write_time), 0)::float8, coalesce(sum(fsync_time), 0)::float8 FROM pg_stat_io`
	ioQuery18 = `SELECT coalesce(sum(reads), 0)::bigint, coalesce(sum(writes), 0)::bigint, coalesce(sum(fsyncs), 0)::bigint,
  coalesce(sum(read_bytes), 0)::bigint, coalesce(sum(write_bytes), 0)::bigint,
  coalesce(sum(read_time), 0)::float8, coalesce(sum(write_time), 0)::float8, coalesce(sum(fsync_time), 0)::float8 FROM pg_stat_io`
)

// replicationQuery reads pg_stat_replication. To a login without pg_read_all_stats every
// column but pid (and application_name, from pg_stat_activity) is NULL: such a row is
// counted as hidden, never read as a standby with no lag.
const replicationQuery = `SELECT coalesce(application_name, ''),
  extract(epoch FROM write_lag)::float8, extract(epoch FROM flush_lag)::float8,
  extract(epoch FROM replay_lag)::float8,
  pg_wal_lsn_diff(replay_lsn, '0/0')::bigint,
  pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::bigint,
  coalesce(sync_state IN ('sync', 'quorum'), false),
  coalesce(extract(epoch FROM clock_timestamp() - reply_time), 0)::float8,
  coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), flush_lsn), 0)::bigint
FROM pg_stat_replication WHERE NOT pg_is_in_recovery()`

// readCounters reads everything in one round trip (a pipelined batch).
func (n *pgNode) readCounters(ctx context.Context) (pgCounters, error) {
	c := pgCounters{standbys: map[string]standbyState{}}
	b := &pgx.Batch{}
	b.Queue(statsQuery).QueryRow(func(r pgx.Row) error {
		return r.Scan(&c.commits, &c.rollbacks, &c.blksRead, &c.blksHit, &c.tempBytes, &c.deadlocks,
			&c.blkReadMs, &c.blkWriteMs, &c.inRecovery, &c.lsn, &c.sinceReplay)
	})
	ckpt := checkpointsQuery16
	if n.info.VersionNum >= 170000 {
		ckpt = checkpointsQuery17
	}
	b.Queue(ckpt).QueryRow(func(r pgx.Row) error { return r.Scan(&c.checkpoints, &c.ckptBuffers) })
	if n.info.HasStatIO {
		q := ioQuery16
		if n.info.VersionNum >= 180000 {
			q = ioQuery18
		}
		c.io = &ioCounters{}
		b.Queue(q).QueryRow(func(r pgx.Row) error {
			i := c.io
			return r.Scan(&i.reads, &i.writes, &i.fsyncs, &i.readBytes, &i.writeBytes, &i.readMs, &i.writeMs, &i.fsyncMs)
		})
	}
	b.Queue(replicationQuery).Query(func(rows pgx.Rows) error {
		var name string
		var s standbyState
		var replayLSN, behind *int64
		_, err := pgx.ForEachRow(rows, []any{&name, &s.writeLag, &s.flushLag, &s.replayLag, &replayLSN, &behind, &s.sync, &s.sinceReply, &s.unflushed}, func() error {
			if replayLSN == nil || behind == nil {
				c.hiddenStandbys++
				return nil
			}
			s.replayLSN, s.behind = *replayLSN, *behind
			if node, ok := n.standbyNames[name]; ok {
				name = node
			}
			c.standbys[name] = s
			return nil
		})
		return err
	})
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	before := time.Now()
	err := n.conn.SendBatch(ctx, b).Close()
	c.at = time.Now()
	c.posAt = midpoint(before, c.at)
	return c, err
}

type rate struct {
	name, unit string
	v          float64
}

// rates are the node's rates from reading p to c, secs apart.
func (c pgCounters) rates(p pgCounters, secs float64) []rate {
	per := func(a, b int64) float64 { return float64(sub64(a, b)) / secs }
	out := []rate{
		{"commits_per_s", "1/s", per(c.commits, p.commits)},
		{"rollbacks_per_s", "1/s", per(c.rollbacks, p.rollbacks)},
		{"blks_read_per_s", "1/s", per(c.blksRead, p.blksRead)},
		{"blks_hit_per_s", "1/s", per(c.blksHit, p.blksHit)},
		{"temp_mb_per_s", "MB/s", per(c.tempBytes, p.tempBytes) / 1e6},
		{"deadlocks_per_s", "1/s", per(c.deadlocks, p.deadlocks)},
		{"checkpoint_buffers_per_s", "1/s", per(c.ckptBuffers, p.ckptBuffers)},
	}
	if hits, reads := sub64(c.blksHit, p.blksHit), sub64(c.blksRead, p.blksRead); hits+reads > 0 {
		out = append(out, rate{"hit_ratio", "", float64(hits) / float64(hits+reads)})
	}
	if reads := sub64(c.blksRead, p.blksRead); reads > 0 && c.blkReadMs > p.blkReadMs {
		out = append(out, rate{"blk_read_ms", "ms", (c.blkReadMs - p.blkReadMs) / float64(reads)})
	}
	wal := "wal_mb_per_s"
	if c.inRecovery {
		wal = "replay_mb_per_s"
	}
	if c.inRecovery == p.inRecovery {
		out = append(out, rate{wal, "MB/s", per(c.lsn, p.lsn) / 1e6})
	}
	if c.io != nil && p.io != nil {
		i, j := c.io, p.io
		out = append(out,
			rate{"io_reads_per_s", "1/s", per(i.reads, j.reads)},
			rate{"io_writes_per_s", "1/s", per(i.writes, j.writes)},
			rate{"io_fsyncs_per_s", "1/s", per(i.fsyncs, j.fsyncs)},
			rate{"io_read_mb_per_s", "MB/s", per(i.readBytes, j.readBytes) / 1e6},
			rate{"io_write_mb_per_s", "MB/s", per(i.writeBytes, j.writeBytes) / 1e6})
		if r := sub64(i.reads, j.reads); r > 0 && i.readMs > j.readMs {
			out = append(out, rate{"io_read_ms", "ms", (i.readMs - j.readMs) / float64(r)})
		}
		if f := sub64(i.fsyncs, j.fsyncs); f > 0 && i.fsyncMs > j.fsyncMs {
			out = append(out, rate{"io_fsync_ms", "ms", (i.fsyncMs - j.fsyncMs) / float64(f)})
		}
	}
	return out
}

// putExtra merges the samplers' step data into the step's sample section. A section there
// that does not decode is an error, and is left as it was.
func putExtra(st *result.Step, e result.SampleStep) error {
	old, err := st.Sample()
	if err != nil {
		return err
	}
	if old == nil {
		old = &result.SampleStep{}
	}
	if old.Nodes == nil {
		old.Nodes = map[string]result.SampleNode{}
	}
	for k, v := range e.Nodes {
		old.Nodes[k] = v
	}
	return st.SetExtra(result.ExtraSample, old)
}
