package experiment

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/segment"
	"github.com/agbench/agbench/internal/target"
)

// The segments' barrier is kept in the target database itself, so that segments on many
// machines need no service of their own: each registers a row for a step and waits until
// the rows of all N are there, and all begin at the same time by the database's clock.
const (
	// BarrierTable is the barrier's table, made on first use in the target database.
	BarrierTable = "agbench_segment_barrier"
	// barrierLead is how long after the last segment arrived they all begin: time for every
	// segment's next look to see that all are there.
	barrierLead = time.Second
	// barrierPoll is how often a waiting segment looks.
	barrierPoll = 50 * time.Millisecond
	// barrierStale is how much longer than the timeout a row counts: older ones are of an
	// earlier run of the same name that ended without removing them.
	barrierStale = time.Minute
)

const barrierDDL = `CREATE TABLE IF NOT EXISTS ` + BarrierTable + ` (
	run text NOT NULL, step int NOT NULL, segment int NOT NULL, segments int NOT NULL,
	arrived timestamptz NOT NULL, PRIMARY KEY (run, step, segment))`

// barrier is one segment's side of the segments' barrier: a session of its own to the primary.
type barrier struct {
	conn    *pgx.Conn
	seg     segment.Segment
	run     string
	timeout time.Duration
}

// openBarrier connects to cs and makes the barrier's table when it does not exist (a login
// without CREATE on the schema needs it made beforehand: the error says how).
func openBarrier(ctx context.Context, cs string, seg segment.Segment, run string, timeout time.Duration) (*barrier, error) {
	c, err := target.Connect(ctx, cs, "agbench")
	if err != nil {
		return nil, fmt.Errorf("segment barrier: %w", err)
	}
	b := &barrier{conn: c, seg: seg, run: run, timeout: timeout}
	var exists bool
	if err := c.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, BarrierTable).Scan(&exists); err != nil {
		b.close()
		return nil, fmt.Errorf("segment barrier: %w", err)
	}
	if !exists {
		// Segments starting together would race to make it: one makes it, the others wait.
		err := pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, BarrierTable); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, barrierDDL)
			return err
		})
		if err != nil {
			b.close()
			return nil, fmt.Errorf("segment barrier: make table %s (a login without CREATE on the schema needs it made first: %s): %w",
				BarrierTable, strings.Join(strings.Fields(barrierDDL), " "), err)
		}
	}
	return b, nil
}

// wait registers the segment at step and returns once every segment has, at the start they
// agreed on; a segment missing after the timeout fails the wait, naming it.
func (b *barrier) wait(ctx context.Context, step int) (result.SegmentStart, error) {
	_, err := b.conn.Exec(ctx, `INSERT INTO `+BarrierTable+` (run, step, segment, segments, arrived)
		VALUES ($1, $2, $3, $4, clock_timestamp())
		ON CONFLICT (run, step, segment) DO UPDATE SET segments = EXCLUDED.segments, arrived = EXCLUDED.arrived`,
		b.run, step, b.seg.Index, b.seg.Of)
	if err != nil {
		return result.SegmentStart{}, fmt.Errorf("segment barrier: register segment %s at step %d: %w", b.seg, step+1, err)
	}
	deadline := time.Now().Add(b.timeout)
	for {
		arrived, last, offset, err := b.look(ctx, step)
		if err != nil {
			return result.SegmentStart{}, fmt.Errorf("segment barrier at step %d: %w", step+1, err)
		}
		if len(arrived) == b.seg.Of {
			return b.begin(ctx, step, last.Add(barrierLead), offset)
		}
		if time.Now().After(deadline) {
			return result.SegmentStart{}, fmt.Errorf("segment barrier at step %d: segment(s) %s of %d did not arrive within --segment-timeout %v (arrived: %s)",
				step+1, missing(arrived, b.seg.Of), b.seg.Of, b.timeout, joinInts(arrived))
		}
		select {
		case <-ctx.Done():
			return result.SegmentStart{}, ctx.Err()
		case <-time.After(barrierPoll):
		}
	}
}

// look reads the segments arrived at step, when the last of them did and the database's
// clock minus this host's (from the midpoint of the query's round trip).
func (b *barrier) look(ctx context.Context, step int) (arrived []int, last time.Time, offset time.Duration, err error) {
	sent := time.Now()
	var now time.Time
	var lastArrived *time.Time
	var got []int32
	err = b.conn.QueryRow(ctx, `SELECT clock_timestamp(), coalesce(array_agg(segment ORDER BY segment), '{}'), max(arrived)
		FROM `+BarrierTable+` WHERE run = $1 AND step = $2 AND segments = $3 AND arrived > clock_timestamp() - $4::interval`,
		b.run, step, b.seg.Of, (b.timeout+barrierStale).String()).Scan(&now, &got, &lastArrived)
	if err != nil {
		return nil, time.Time{}, 0, err
	}
	back := time.Now()
	offset = now.Sub(sent.Add(back.Sub(sent) / 2))
	for _, g := range got {
		arrived = append(arrived, int(g))
	}
	if lastArrived != nil {
		last = *lastArrived
	}
	return arrived, last, offset, nil
}

// begin sleeps until at (the database's clock) by this host's clock and says when it began.
func (b *barrier) begin(ctx context.Context, step int, at time.Time, offset time.Duration) (result.SegmentStart, error) {
	timer := time.NewTimer(time.Until(at.Add(-offset)))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return result.SegmentStart{}, ctx.Err()
	case <-timer.C:
	}
	began := time.Now().Add(offset)
	return result.SegmentStart{Step: step, At: at.UTC(), Began: began.UTC(), ClockOffsetSeconds: offset.Seconds()}, nil
}

// close removes the segment's rows (a later run of the same name starts afresh) and ends
// the session.
func (b *barrier) close() {
	if b == nil || b.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// A row left behind (the session gone) grows stale and is not counted again.
	_, _ = b.conn.Exec(ctx, `DELETE FROM `+BarrierTable+` WHERE run = $1 AND segment = $2`, b.run, b.seg.Index)
	b.conn.Close(ctx)
}

// missing lists the segments of of not in arrived.
func missing(arrived []int, of int) string {
	var out []int
	for i := 0; i < of; i++ {
		if !slices.Contains(arrived, i) {
			out = append(out, i)
		}
	}
	return joinInts(out)
}

func joinInts(ns []int) string {
	if len(ns) == 0 {
		return "none"
	}
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}
