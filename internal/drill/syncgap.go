package drill

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/result"
)

// After a failover the new primary may accept writes with no synchronous standby: Patroni in
// synchronous_mode without synchronous_mode_strict empties synchronous_standby_names when no
// standby is left to name (with one standby, until the old primary rejoins), and then a
// commit it acknowledges is on that node alone. With strict mode Patroni names '*' instead,
// and commits wait. The drill's sampler asks the node at the load's write address, with the
// lag, what it says of its synchronous standbys; syncGap measures both spans from it.

// syncState is what the node at the write address said of its synchronous standbys over a
// run of samples that all said the same: the first and last sample, its port, whether it
// accepted writes, its synchronous_standby_names and synchronous_commit, and the standbys
// streaming to it with sync_state sync or quorum.
type syncState struct {
	from, to time.Time
	srv      server
	primary  bool
	names    string
	commit   string
	sync     []string
	n        int // samples
}

func (s *syncState) same(o *syncState) bool {
	return s.srv.is(o.srv) && s.primary == o.primary && s.names == o.names && s.commit == o.commit && slices.Equal(s.sync, o.sync)
}

// unprotected is true when a commit the node acknowledges waits for no standby.
func (s *syncState) unprotected() bool {
	return s.names == "" || s.commit == "local" || s.commit == "off"
}

// waiting is true when commits wait for a synchronous standby and none streams.
func (s *syncState) waiting() bool { return !s.unprotected() && len(s.sync) == 0 }

// errSyncHidden says a login cannot see which standbys are synchronous: pg_stat_replication
// shows a login without pg_read_all_stats its walsenders' rows with state and sync_state
// NULL. Read as no synchronous standby streaming, every sample would say commits waited.
var errSyncHidden = errors.New("pg_stat_replication hides its standbys' sync_state from this login (it lacks pg_read_all_stats; pg_monitor includes it)")

// readSyncState reads one sample of c's synchronous standbys; errSyncHidden when the login
// cannot see them (the connection is sound).
func readSyncState(ctx context.Context, c *pgx.Conn) (syncState, error) {
	s := syncState{from: time.Now()}
	var hidden bool
	err := c.QueryRow(ctx, `SELECT `+serverColumns+`, NOT pg_is_in_recovery(),
		current_setting('synchronous_standby_names'), current_setting('synchronous_commit'),
		ARRAY(SELECT application_name FROM pg_stat_replication
			WHERE state = 'streaming' AND sync_state IN ('sync', 'quorum') ORDER BY 1),
		(SELECT count(*) > 0 AND count(sync_state) = 0 FROM pg_stat_replication)`).
		Scan(&s.srv.port, &s.srv.started, &s.primary, &s.names, &s.commit, &s.sync, &hidden)
	s.to = s.from
	if err == nil && hidden {
		err = errSyncHidden
	}
	return s, err
}

// syncSample records a sample: it extends the last state when it says the same.
func (t *tally) syncSample(s syncState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := len(t.sync); n > 0 && t.sync[n-1].same(&s) {
		t.sync[n-1].to = s.to
		t.sync[n-1].n++
		return
	}
	s.n = 1
	t.sync = append(t.sync, s)
}

// syncMissed records why the sampler could not read a sample.
func (t *tally) syncMissed(err error) {
	t.mu.Lock()
	t.syncErr, t.syncErrAt = err.Error(), time.Now()
	t.mu.Unlock()
}

// syncGap measures, after a failover to node (its port), the new primary's spans without a
// synchronous standby and waiting for one, until it first named one streaming; oldPrimary
// is the failover's old primary and cause the setting behind the state, when known
// ("Patroni synchronous_mode without strict"); end is when the load, and the sampler, stopped:
// a state still held at the last sample held until then, as far as anyone looked. It adds
// the spans' ends to the cycle's events.
func (t *tally) syncGap(node string, srv server, oldPrimary, cause string, end time.Time) *result.DrillSyncGap {
	t.mu.Lock()
	defer t.mu.Unlock()
	g := &result.DrillSyncGap{Node: node}
	var states []syncState
	for _, s := range t.sync {
		if s.srv.is(srv) && s.primary && s.from.After(t.faultAt) {
			states = append(states, s)
			g.Samples += s.n
		}
	}
	if len(states) == 0 {
		why := "no sample of it was read after the failover"
		if t.syncErr != "" {
			why += " (last error: " + t.syncErr + ")"
		}
		g.Note = fmt.Sprintf("not measured: %s's synchronous standbys unknown: %s", node, why)
		return g
	}
	rel := func(at time.Time) *float64 { v := at.Sub(t.faultAt).Seconds(); return &v }
	g.SampledFrom, g.SampledTo = rel(states[0].from), rel(states[len(states)-1].to)
	stop := slices.IndexFunc(states, func(s syncState) bool { return !s.unprotected() && len(s.sync) > 0 })
	if stop < 0 {
		stop, g.Open = len(states), true
	} else {
		s := states[stop]
		g.SyncAt, g.SyncStandbys = rel(s.from), s.sync
		if len(s.sync) == 1 && s.sync[0] == oldPrimary {
			g.OldPrimary = oldPrimary
		}
		t.events = append(t.events, result.DrillEvent{At: s.from, Event: result.EventSyncBack, Detail: strings.Join(s.sync, ", ") + " synchronous"})
	}
	// A state lasts until the next one's first sample; the last one until the load's end,
	// when the sampler went on seeing it until then.
	ends := func(i int) time.Time {
		if i+1 < len(states) {
			return states[i+1].from
		}
		if end.After(states[i].to) && t.watchedToEnd(&states[i]) {
			return end
		}
		return states[i].to
	}
	var no, wait span
	for i := range stop {
		switch s := &states[i]; {
		case s.unprotected():
			no.add(s.from, ends(i))
			if g.Cause == "" {
				g.Cause = unprotectedCause(s, cause)
			}
		case s.waiting():
			wait.add(s.from, ends(i))
		}
	}
	g.NoSyncSeconds, g.NoSyncFrom, g.NoSyncTo = no.figures(rel)
	g.WaitedSeconds, g.WaitedFrom, g.WaitedTo = wait.figures(rel)
	if g.Cause == "" && wait.total > 0 {
		g.Cause = cause
	}
	if no.total > 0 {
		for _, a := range t.acks {
			if a.srv.is(srv) && !a.at.Before(no.from) && !a.at.After(no.to) {
				g.NoSyncAcked++
			}
		}
		t.events = append(t.events, result.DrillEvent{At: no.from, Event: result.EventNoSync, Detail: node + " acknowledges commits with no synchronous standby"})
	}
	return g
}

// watchedToEnd reports whether s, the new primary's last state sampled, is the last thing
// the sampler saw, with no error since: it held, as far as anyone looked, until the sampler
// stopped with the load. When the sampler failed, or read another node, after s's last
// sample, nobody saw how long s went on: the span ends at that sample (still open, so a
// lower bound), and "at least" stays true. The caller holds the lock.
func (t *tally) watchedToEnd(s *syncState) bool {
	last := &t.sync[len(t.sync)-1]
	return last.from.Equal(s.from) && last.same(s) && !t.syncErrAt.After(s.to)
}

// unprotectedCause names why s waits for no standby: synchronous_commit, else the cluster's
// cause when known, else the empty synchronous_standby_names.
func unprotectedCause(s *syncState, cause string) string {
	switch {
	case s.commit == "local" || s.commit == "off":
		return "synchronous_commit " + s.commit
	case cause != "":
		return cause
	}
	return "synchronous_standby_names empty"
}

// span sums the time of a state over runs of samples, from the first run's start to the
// last one's end.
type span struct {
	total    time.Duration
	from, to time.Time
}

func (s *span) add(from, to time.Time) {
	s.total += to.Sub(from)
	if s.from.IsZero() {
		s.from = from
	}
	s.to = to
}

// figures are the span's seconds, and its start and end from the fault: 0 and no ends
// when it never held.
func (s *span) figures(rel func(time.Time) *float64) (secs, from, to *float64) {
	v := s.total.Seconds()
	if s.total <= 0 {
		return &v, nil, nil
	}
	return &v, rel(s.from), rel(s.to)
}

// waitedForOldPrimary sets dc.SyncWait, when agbench's own reasoning did not (under Patroni,
// or observe), from what the new primary said: its commits waited for a synchronous standby
// until the old primary rejoined as one (Patroni's synchronous_mode_strict). A wait that came
// after a time with no synchronous standby is not that: without strict, Patroni names the
// rejoined standby in synchronous_standby_names, and until its walsender has read the new
// setting (a sample or two) it streams as async and commits wait; the writes were back long
// before, so the cycle's writes-back does not wait for the old primary. The gap's sentence
// still tells that short wait.
func waitedForOldPrimary(dc *result.DrillCycle) {
	g := dc.SyncGap
	if dc.SyncWait != "" || g == nil || g.WaitedSeconds == nil || *g.WaitedSeconds == 0 || g.OldPrimary == "" {
		return
	}
	if g.NoSyncSeconds != nil && *g.NoSyncSeconds > 0 {
		return
	}
	dc.SyncWait = fmt.Sprintf("%s had no synchronous standby until %s rejoined as one: commits waited for it %.1f s", g.Node, g.OldPrimary, *g.WaitedSeconds)
	if g.Cause != "" {
		dc.SyncWait += " (" + g.Cause + ")"
	}
}
