package drill

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/result"
)

// interval is the width of the timeline's counts; lagEvery how often the replication lag
// is sampled.
const (
	interval = 100 * time.Millisecond
	lagEvery = 200 * time.Millisecond
)

// timeline counts the load's operations per interval from start, by when each ended. The
// tally's lock guards it.
type timeline struct {
	start                             time.Time
	writes, writeErrs, reads, readErr []int64
	lag                               []result.DrillLag
}

// add counts one operation that ended at at. A timeline without a start (a tally not made by
// newTally) counts nothing: from the zero time every interval since year 1 would be kept.
func (tl *timeline) add(s *[]int64, at time.Time) {
	if tl.start.IsZero() {
		return
	}
	i := max(int(at.Sub(tl.start)/interval), 0)
	for len(*s) <= i {
		*s = append(*s, 0)
	}
	(*s)[i]++
}

// section is the timeline as the result keeps it, every series as long as the longest.
func (tl *timeline) section() *result.DrillTimeline {
	n := max(len(tl.writes), len(tl.writeErrs), len(tl.reads), len(tl.readErr))
	pad := func(s []int64) []int64 { return append(slices.Clone(s), make([]int64, n-len(s))...) }
	return &result.DrillTimeline{Start: tl.start, IntervalMS: int(interval / time.Millisecond),
		Writes: pad(tl.writes), WriteErrors: pad(tl.writeErrs), Reads: pad(tl.reads), ReadErrors: pad(tl.readErr),
		Lag: slices.Clone(tl.lag)}
}

// newTally starts a cycle's tally, its timeline from start.
func newTally(start time.Time) *tally {
	return &tally{tl: timeline{start: start}, orders: map[int64]order{}}
}

// event notes a moment of the cycle.
func (t *tally) event(name string, at time.Time, detail string) {
	t.mu.Lock()
	t.events = append(t.events, result.DrillEvent{At: at, Event: name, Detail: detail})
	t.mu.Unlock()
}

// writesBlocked is the longest time from the fault to end without an acknowledged write,
// and the acknowledgment that ended it: nil when none was acknowledged after the fault. The
// caller holds the lock.
func (t *tally) writesBlocked(end time.Time) (*float64, time.Time) {
	if t.faultAt.IsZero() || len(t.acks) == 0 {
		return nil, time.Time{}
	}
	at := make([]time.Time, 0, len(t.acks)+1)
	for _, a := range t.acks {
		at = append(at, a.at)
	}
	slices.SortFunc(at, time.Time.Compare)
	longest, prev, back := time.Duration(0), t.faultAt, at[0]
	for _, a := range at {
		if a.After(prev) && a.Sub(prev) > longest {
			longest, back = a.Sub(prev), a
		}
		if a.After(prev) {
			prev = a
		}
	}
	// Writes not back by the end of the load: no acknowledgment ended the outage. (The last
	// moments before the load stopped are not an outage.)
	if tail := end.Sub(prev); tail > longest && tail > time.Second {
		return nil, time.Time{}
	}
	s := longest.Seconds()
	return &s, back
}

// sampleLag samples, every lagEvery until ctx ends or the load stops, each standby's
// replication lag on whichever node accepts writes (the load's write address), and what
// that node says of its synchronous standbys (syncgap.go). A sample that cannot be read is
// left out: absent, not zero.
func (l *load) sampleLag(ctx context.Context) {
	defer l.wg.Done()
	var c *pgx.Conn
	defer func() {
		if c != nil {
			c.Close(context.Background())
		}
	}()
	for l.running(ctx) {
		sleep(ctx, lagEvery)
		if c == nil {
			cctx, cancel := context.WithTimeout(ctx, connectTimeout)
			var err error
			c, err = pgx.Connect(cctx, l.writeURL)
			cancel()
			if err != nil {
				l.tally.syncMissed(err)
				c = nil
				continue
			}
		}
		qctx, cancel := context.WithTimeout(ctx, time.Second)
		rows, err := c.Query(qctx, `SELECT application_name, pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::bigint
			FROM pg_stat_replication WHERE replay_lsn IS NOT NULL ORDER BY 1`)
		var got []result.DrillLag
		if err == nil {
			now := time.Now()
			for rows.Next() {
				s := result.DrillLag{At: now}
				if rows.Scan(&s.Standby, &s.LagBytes) == nil {
					got = append(got, s)
				}
			}
			err = rows.Err()
		}
		var ss syncState
		if err == nil {
			ss, err = readSyncState(qctx, c)
		}
		cancel()
		if err != nil && !errors.Is(err, errSyncHidden) {
			l.tally.syncMissed(err)
			c.Close(context.Background())
			c = nil
			continue
		}
		if err != nil { // the lag was read; the synchronous standbys cannot be
			l.tally.syncMissed(err)
		} else {
			l.tally.syncSample(ss)
		}
		l.tally.mu.Lock()
		l.tally.tl.lag = append(l.tally.tl.lag, got...)
		l.tally.mu.Unlock()
	}
}
