package clustertest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// replayLagEvery is how often a ReplayLagWatch reads pg_stat_replication.
const replayLagEvery = 50 * time.Millisecond

// ReplayLagWatch reads a primary's pg_stat_replication.replay_lag of its one standby, as a
// superuser sees it, beside a test's own measurement of the lag: the figure that agbench's
// lag from WAL positions (an ordinary login's) is checked against.
type ReplayLagWatch struct {
	t     testing.TB
	stop  chan struct{}
	wg    sync.WaitGroup
	reads []replayLagRead // in the order read; reply_time never goes back
}

// replayLagRead is one reading: replay_lag as of the standby's reply (reply_time).
type replayLagRead struct {
	reply time.Time
	lag   float64
}

// WatchReplayLag starts reading replay_lag on c (a superuser's session on the primary, for
// the watch alone) every 50 ms, until Stop. A reading where replay_lag is NULL (no lag
// measured yet, or forgotten) is not kept.
func WatchReplayLag(ctx context.Context, t testing.TB, c *pgx.Conn) *ReplayLagWatch {
	w := &ReplayLagWatch{t: t, stop: make(chan struct{})}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for {
			var r replayLagRead
			var lag *float64
			if err := c.QueryRow(ctx, "SELECT reply_time, extract(epoch FROM replay_lag)::float8 FROM pg_stat_replication").Scan(&r.reply, &lag); err != nil {
				t.Error(err)
				return
			}
			if lag != nil {
				r.lag = *lag
				w.reads = append(w.reads, r)
			}
			select {
			case <-w.stop:
				return
			case <-time.After(replayLagEvery):
			}
		}
	}()
	return w
}

// Stop ends the readings and waits for the last one; after it the readings may be read.
func (w *ReplayLagWatch) Stop() {
	close(w.stop)
	w.wg.Wait()
}

// Reads is how many readings measured the lag (Stop first).
func (w *ReplayLagWatch) Reads() int { return len(w.reads) }

// At is pg_stat_replication's lag at a moment, for a standby whose replay stays held back
// (paused, or delayed past the moment): it grows one second a second from the last reply
// before the moment. False when no reply came within the second before it (Stop first).
func (w *ReplayLagWatch) At(at time.Time) (float64, bool) {
	var last *replayLagRead
	for i := range w.reads {
		if !w.reads[i].reply.After(at) {
			last = &w.reads[i]
		}
	}
	if last == nil || at.Sub(last.reply) > time.Second {
		return 0, false
	}
	return last.lag + at.Sub(last.reply).Seconds(), true
}
