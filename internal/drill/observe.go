package drill

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/measure"
	"github.com/agbench/agbench/internal/result"
)

// FaultObserve injects nothing: the ledger and the measurements run while the cluster is
// failed over by other means — the user's, or Patroni's when the drill is given its REST
// APIs (then the drill asks the leader for a switchover each cycle). It works on clusters
// agbench did not make, through connection strings only.
const FaultObserve = "observe"

// OldPrimaryRestarted is an observe cycle's OldPrimary when the primary was restarted in
// place (a later postmaster start time, still accepting writes) rather than failed over.
const OldPrimaryRestarted = "restarted in place"

// DefaultObserveWait bounds the wait for the user's failover in each observe cycle.
const DefaultObserveWait = 10 * time.Minute

// observePoll is how often the nodes are asked whether they accept writes while a
// failover is awaited.
const observePoll = 20 * time.Millisecond

// RunObserve runs an observe drill on the endpoints: per cycle the ledger's load, a
// failover by other means (awaited, or asked of Patroni), the load again, and the checks —
// every acknowledged commit on the new primary, exactly one writable node. Whether the old
// primary came back is reported, not checked: its return is the failover's owner's job.
func RunObserve(ctx context.Context, e *Endpoints, o Options, res *result.Result, rec Recorder, p Progress) (*result.DrillRun, error) {
	if p == nil {
		p = func(string, ...any) {}
	}
	run := &result.DrillRun{Fault: o.Fault, Cycles: o.Cycles}
	save := func() {
		Summarize(run, res.Steps)
		_ = res.SetExtra(result.ExtraDrill, run)
		_ = rec.Save()
	}
	primary, err := e.primary(ctx)
	if err != nil {
		return nil, err
	}
	run.Commit = e.commitMode(ctx, primary)
	if len(e.Patroni) > 0 {
		var syncMode bool
		_, o.syncCause, syncMode = patroniSync(ctx, e.Patroni)
		run.Commit = observedCommit(run.Commit, syncMode)
	}
	o.async = run.Commit == "async"
	if err := e.createLedger(ctx, primary); err != nil {
		return nil, fmt.Errorf("create %s: %w", LedgerTable, err)
	}
	var runErr error
	for i := 1; i <= o.Cycles; i++ {
		if ctx.Err() != nil {
			runErr = ctx.Err()
			break
		}
		st, next, err := e.observeCycle(ctx, o, i, primary, p)
		if st != nil {
			rec.AddStep(*st)
		}
		save()
		if err != nil {
			runErr = err
			break
		}
		primary = next
	}
	hctx := context.WithoutCancel(ctx)
	run.Left = e.whole(hctx)
	if !o.Keep {
		if p, err := e.primary(hctx); err == nil {
			err = e.exec(hctx, p, `DROP TABLE IF EXISTS `+LedgerTable)
			if err != nil {
				runErr = errors.Join(runErr, fmt.Errorf("drop %s: %w", LedgerTable, err))
			}
		}
	}
	save()
	if runErr == nil && len(run.Failed) > 0 {
		runErr = fmt.Errorf("drill: %s", strings.Join(run.Failed, "; "))
	}
	return run, runErr
}

// observeCycle runs one cycle from primary and returns its step and the new primary.
func (e *Endpoints) observeCycle(ctx context.Context, o Options, n int, primary *Endpoint, p Progress) (*result.Step, *Endpoint, error) {
	writeURL, readURL := e.multiHost("read-write"), e.multiHost("prefer-standby")
	if e.Listener != "" {
		writeURL = e.Listener
	}
	start := time.Now()
	l := &load{writeURL: writeURL, readURL: readURL, cycle: n, commitWait: o.CommitWait, tally: newTally(start), reg: measure.NewRegistry(start)}
	// Observe does not time a listener's rerouting: read-intent is agbench's listener's own
	// connection parameter, which another listener (or a server behind it) would refuse.
	l.tally.noReroute = "observe does not time a listener's rerouting (the load connects to the nodes by a multi-host connection string)"
	if e.Listener != "" {
		l.tally.noReroute = "observe does not time a listener's rerouting (its writes go through --listener, its reads to the nodes by a multi-host connection string)"
	}
	dc := &result.DrillCycle{Cycle: n, Fault: o.Fault, From: primary.Name,
		WALBytesNote: "not measured: the drill does not read the servers' files of a cluster it did not make"}
	cyc := &Cycle{N: n, tally: l.tally}
	since := postmasterStart(ctx, primary)
	stopSamplers := sampleCycle(ctx, o.Samplers, start)
	stopTicks := l.ticks(tick)
	l.start(ctx, o.Writers, o.Readers)
	p("cycle %d: load on %s (%d writers, %d readers) for %v", n, dc.From, o.Writers, o.Readers, o.Between)
	sleep(ctx, o.Between)

	var next *Endpoint
	var nextSrv server
	var faultErr error
	if ctx.Err() == nil && o.Hooks != nil && o.Hooks.BeforeFault != nil {
		faultErr = o.Hooks.BeforeFault(ctx, cyc)
	}
	if ctx.Err() == nil && faultErr == nil {
		next, nextSrv, faultErr = e.awaitFailover(ctx, o, cyc, dc, primary, since, p)
	}
	if next != nil && len(e.Patroni) == 0 { // seen, not asked for: the demotion came first
		l.tally.timeFaultFromWrites(dc, primary.Name)
	}
	if next != nil {
		dc.To = next.Name
		// The new primary is told by what its server gave: its own port and start time.
		l.tally.primaryIs(nextSrv)
		waitBack(ctx, l.tally, o.Readers > 0, backWait)
		sleep(ctx, o.Between)
	}
	l.finish()
	end := time.Now()
	stopTicks(end)
	st := l.step(n, o, start, end)
	stopSamplers(context.WithoutCancel(ctx), st)
	if next != nil {
		e.checkObserved(context.WithoutCancel(ctx), l.tally, dc, primary, next)
		if !o.async && next != primary { // restarted in place: no new primary to sample
			dc.SyncGap = l.tally.syncGap(next.Name, nextSrv, primary.Name, o.syncCause, end)
			waitedForOldPrimary(dc)
		}
	}
	l.tally.fill(dc, end)
	if faultErr != nil {
		dc.Problems = append(dc.Problems, faultErr.Error())
	}
	if ctx.Err() != nil {
		st.Complete, st.IncompleteReason = false, "interrupted"
	}
	if err := st.SetExtra(result.ExtraDrill, dc); err != nil {
		return st, nil, err
	}
	if faultErr != nil {
		return st, nil, faultErr
	}
	return st, next, ctx.Err()
}

// postmasterStart is when n's postmaster started (zero when it cannot be read): a later one
// after the fault is a restart in place.
func postmasterStart(ctx context.Context, n *Endpoint) time.Time {
	var at time.Time
	c, err := pgx.Connect(ctx, n.Conn)
	if err != nil {
		return at
	}
	defer c.Close(context.WithoutCancel(ctx))
	_ = c.QueryRow(ctx, `SELECT pg_postmaster_start_time()`).Scan(&at)
	return at
}

// awaitFailover asks Patroni for a switchover when the drill has its REST APIs, else waits
// for the user's failover: the fault is the first moment the primary stopped answering as a
// writable node, the promotion the first another node answered as one. The primary itself
// answering as one again with a later postmaster start time than since (its start before
// the cycle) is a restart in place (as Patroni restarts a killed postmaster while it holds
// the leader key): no failover, but a recovery whose commits are checked all the same.
// It returns the node that accepts writes and its server as it answered.
func (e *Endpoints) awaitFailover(ctx context.Context, o Options, c *Cycle, dc *result.DrillCycle, primary *Endpoint, since time.Time, p Progress) (next *Endpoint, srv server, err error) {
	wait := o.ObserveWait
	if wait <= 0 {
		wait = DefaultObserveWait
	}
	switched, err := e.startSwitchover(ctx, c, dc, primary, p)
	if err != nil {
		return nil, server{}, err
	}
	if switched == nil {
		p("cycle %d: waiting up to %v for a failover from %s by your own means", c.N, wait, primary.Name)
	}
	probe := newProber(e, probeWait)
	defer probe.close()
	deadline := time.Now().Add(wait)
	for {
		select {
		case err := <-switched:
			if err != nil {
				return nil, server{}, err
			}
		default:
		}
		a := probe.ask(ctx)
		if at, gone := goneAt(primary.Name, a); dc.FaultAt.IsZero() && gone {
			dc.FaultAt = at
			c.tally.fault(at)
			msg := fmt.Sprintf("cycle %d: %s no longer answers as primary", c.N, primary.Name)
			if d := time.Since(at); d > probeWait+observePoll {
				msg += fmt.Sprintf(" (from %.2fs ago: the question asked then was never answered)", d.Seconds())
			}
			p("%s", msg)
		}
		if next, srv := e.recovered(c, dc, primary, since, a, p); next != nil {
			return next, srv, nil
		}
		if ctx.Err() != nil {
			return nil, server{}, ctx.Err()
		}
		if time.Now().After(deadline) {
			return nil, server{}, fmt.Errorf("no failover from %s within %v (--observe-wait)", primary.Name, wait)
		}
		sleep(ctx, observePoll)
	}
}

// goneAt says whether the primary has stopped answering as a writable node, and from when:
// the moment it was asked the question it answered otherwise or did not answer at all. A
// primary that is only late (its question still under way) has not failed, as a slow link
// or a busy server is no fault; unless another node accepts writes meanwhile.
func goneAt(primary string, a map[string]answer) (time.Time, bool) {
	pa := a[primary]
	switch {
	case pa.writable:
		return time.Time{}, false
	case pa.late:
		for name, o := range a {
			if name != primary && o.writable {
				return pa.asked, true
			}
		}
		return time.Time{}, false
	}
	return pa.asked, true
}

// recovered returns, once the primary stopped answering (dc.FaultAt), the node that accepts
// writes again, with its server as it answered: another node (a failover), or the primary
// restarted in place; nil while none does.
func (e *Endpoints) recovered(c *Cycle, dc *result.DrillCycle, primary *Endpoint, since time.Time, a map[string]answer, p Progress) (*Endpoint, server) {
	if dc.FaultAt.IsZero() {
		return nil, server{}
	}
	for _, n := range e.Nodes {
		if n.Name != primary.Name && a[n.Name].writable {
			s := time.Since(dc.FaultAt).Seconds()
			dc.FailoverSeconds = &s
			p("cycle %d: %s accepts writes %.2fs after the fault", c.N, n.Name, s)
			return e.node(n.Name), a[n.Name].srv
		}
	}
	if me := a[primary.Name]; me.writable && !since.IsZero() && me.srv.started.After(since) {
		s := time.Since(dc.FaultAt).Seconds()
		dc.FailoverSeconds = &s
		dc.OldPrimary = OldPrimaryRestarted
		dc.HAOutcome = fmt.Sprintf("%s restarted in place (its postmaster started at %s, before at %s): no failover",
			primary.Name, me.srv.started.UTC().Format("15:04:05.000"), since.UTC().Format("15:04:05.000"))
		c.tally.event(result.EventRestarted, time.Now(), primary.Name)
		p("cycle %d: %s restarted in place: it accepts writes again %.2fs after the fault", c.N, primary.Name, s)
		return primary, me.srv
	}
	return nil, server{}
}

// startSwitchover, when the drill has Patroni's REST APIs, waits until Patroni's view is
// whole, marks the fault and asks the leader for a switchover; its answer comes on the
// channel. Without REST APIs it returns a nil channel: the failover is the user's.
func (e *Endpoints) startSwitchover(ctx context.Context, c *Cycle, dc *result.DrillCycle, primary *Endpoint, p Progress) (chan error, error) {
	if len(e.Patroni) == 0 {
		return nil, nil
	}
	w := e.patroniWhole(ctx)
	if err := wholeBeforeFault(ctx, w, func(ctx context.Context) error { return e.waitWhole(ctx, w) }, c, p); err != nil {
		return nil, err
	}
	dc.FaultAt = time.Now()
	c.tally.fault(dc.FaultAt)
	p("cycle %d: asking Patroni for a switchover from %s", c.N, primary.Name)
	switched := make(chan error, 1)
	go func() {
		msg, err := e.switchover(context.WithoutCancel(ctx), primary)
		if err == nil {
			dc.HAOutcome = "switchover: " + msg
		}
		switched <- err
	}()
	return switched, nil
}

// patroniWhole is what a whole view of the endpoints' cluster shows to Patroni's REST APIs:
// every member it lists (the user's names for the nodes need not be Patroni's), one per
// REST API, and a synchronous standby when GET /config says synchronous_mode is on (off when
// it cannot be read: the wait then asks for no synchronous standby).
func (e *Endpoints) patroniWhole(ctx context.Context) cluster.PatroniWhole {
	w := cluster.PatroniWhole{URLs: e.Patroni}
	if cfg, err := cluster.PatroniConfigAt(ctx, e.Patroni...); err == nil {
		w.SyncMode = cfg.SynchronousMode
	}
	return w
}

// waitWhole waits until Patroni's view is whole (w) and the servers agree: exactly one node
// accepts writes and every other streams from it (Endpoints.whole), at most
// cluster.PatroniWholeTimeout.
func (e *Endpoints) waitWhole(ctx context.Context, w cluster.PatroniWhole) error {
	deadline := time.Now().Add(cluster.PatroniWholeTimeout)
	if err := w.Wait(ctx, cluster.PatroniWholeTimeout); err != nil {
		return err
	}
	for {
		s := e.whole(ctx)
		if strings.HasPrefix(s, "whole") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("Patroni's view is whole, the servers' is not: %s", s)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		sleep(ctx, 200*time.Millisecond)
	}
}

// switchover asks the leader's Patroni for a switchover away from primary.
func (e *Endpoints) switchover(ctx context.Context, primary *Endpoint) (string, error) {
	for i, n := range e.Nodes {
		if n.Name == primary.Name {
			v, err := cluster.PatroniClusterAt(ctx, e.Patroni[i])
			if err != nil {
				return "", err
			}
			l := v.Leader()
			if l == nil {
				return "", fmt.Errorf("Patroni at %s has no leader", e.Patroni[i])
			}
			return cluster.PatroniSwitchoverAt(ctx, e.Patroni[i], l.Name, "")
		}
	}
	return "", fmt.Errorf("no Patroni REST API for %s", primary.Name)
}

// writableNames lists the nodes that accept writes, in order.
func (e *Endpoints) writableNames(ctx context.Context) []string {
	p := newProber(e, stateWait)
	defer p.close()
	a := p.ask(ctx)
	var out []string
	for _, n := range e.Nodes {
		if a[n.Name].writable {
			out = append(out, n.Name)
		}
	}
	return out
}

// primary finds the one node that accepts writes.
func (e *Endpoints) primary(ctx context.Context) (*Endpoint, error) {
	w := e.writableNames(ctx)
	if len(w) != 1 {
		return nil, fmt.Errorf("%d nodes accept writes (%s); a drill starts from exactly one", len(w), strings.Join(w, ", "))
	}
	return e.node(w[0]), nil
}

func (e *Endpoints) exec(ctx context.Context, n *Endpoint, sql string) error {
	c, err := pgx.Connect(ctx, n.Conn)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	_, err = c.Exec(ctx, sql)
	return err
}

// createLedger makes the ledger table on the primary and waits until every standby that
// answers has replayed it.
func (e *Endpoints) createLedger(ctx context.Context, primary *Endpoint) error {
	if err := e.exec(ctx, primary, `DROP TABLE IF EXISTS `+LedgerTable+`;
CREATE TABLE `+LedgerTable+` (id bigint PRIMARY KEY, cycle int NOT NULL, writer int NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())`); err != nil {
		return err
	}
	deadline := time.Now().Add(catchUpWait)
	for _, n := range e.Nodes {
		if n.Name == primary.Name {
			continue
		}
		for {
			c, err := pgx.Connect(ctx, n.Conn)
			if err == nil {
				var ok bool
				err = c.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, LedgerTable).Scan(&ok)
				c.Close(context.WithoutCancel(ctx))
				if err == nil && ok {
					break
				}
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("standby %s has not replayed the new table after %v: %v", n.Name, catchUpWait, err)
			}
			sleep(ctx, 50*time.Millisecond)
		}
	}
	return nil
}

// checkObserved runs an observe cycle's checks: every acknowledged commit on the new
// primary (in doubt apart), exactly one writable node, and the old primary's state
// reported: streaming (in recovery with a WAL receiver streaming), or what it is.
func (e *Endpoints) checkObserved(ctx context.Context, ta *tally, dc *result.DrillCycle, old, next *Endpoint) {
	dc.Writable = e.writableNames(ctx)
	if len(dc.Writable) != 1 {
		dc.Problems = append(dc.Problems, fmt.Sprintf("%d nodes accept writes (%s); want exactly one", len(dc.Writable), strings.Join(dc.Writable, ", ")))
	}
	if old != next {
		dc.OldPrimary, _ = e.state(ctx, old, next)
	}
	c, err := pgx.Connect(ctx, next.Conn)
	if err != nil {
		dc.Problems = append(dc.Problems, "ledger not read on "+next.Name+": "+err.Error())
		return
	}
	defer c.Close(ctx)
	rows, err := c.Query(ctx, `SELECT id FROM `+LedgerTable+` WHERE cycle = $1`, dc.Cycle)
	if err != nil {
		dc.Problems = append(dc.Problems, "ledger not read on "+next.Name+": "+err.Error())
		return
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		dc.Problems = append(dc.Problems, "ledger not read on "+next.Name+": "+err.Error())
		return
	}
	present := make(map[int64]bool, len(ids))
	for _, id := range ids {
		present[id] = true
	}
	ta.countLost(dc, present)
	dc.Checked = true
}

// streamWait bounds how long a standby whose WAL receiver's status is hidden from the login
// is given to receive the WAL the primary had written when it was asked.
const streamWait = 10 * time.Second

// statusHidden names what would show pg_stat_wal_receiver's status to a login that sees it
// NULL.
const statusHidden = "pg_stat_wal_receiver's status is hidden from this login: pg_read_all_stats or pg_monitor shows it"

// state says in a word where node n is: streaming (from primary), in recovery (not
// streaming), primary, or down with the reason; byPosition is true when "streaming" was judged
// from WAL positions because the login may not read the WAL receiver's status. A standby not
// streaming yet is given streamWait: its WAL receiver starts again a few seconds after its
// primary came back (wal_retrieve_retry_interval).
func (e *Endpoints) state(ctx context.Context, n, primary *Endpoint) (s string, byPosition bool) {
	cctx, cancel := context.WithTimeout(ctx, 2*streamWait+5*time.Second)
	defer cancel()
	c, err := pgx.Connect(cctx, n.Conn)
	if err != nil {
		return "down", false
	}
	defer c.Close(ctx)
	deadline := time.Now().Add(streamWait)
	for {
		var rec bool
		var pid *int32
		var status *string
		// Without pg_read_all_stats the row shows only the WAL receiver's pid: that one runs.
		if err := c.QueryRow(cctx, `SELECT pg_is_in_recovery(), (SELECT pid FROM pg_stat_wal_receiver LIMIT 1),
	(SELECT status FROM pg_stat_wal_receiver LIMIT 1)`).Scan(&rec, &pid, &status); err != nil {
			return "unknown: " + err.Error(), false
		}
		switch {
		case !rec:
			return "accepts writes", false
		case status != nil && *status == "streaming":
			return "streaming", false
		case status == nil && pid != nil:
			return receivesFrom(cctx, c, primary), true
		case time.Now().After(deadline) || cctx.Err() != nil:
			return "in recovery, not streaming", false
		}
		sleep(cctx, 200*time.Millisecond)
	}
}

// receivesFrom judges a standby (c) whose WAL receiver runs but whose status is hidden from
// the login, from what any login may read: it streams when its pg_last_wal_receive_lsn() (or
// pg_last_wal_replay_lsn()) reaches, within streamWait, the primary's pg_current_wal_flush_lsn() read first (the
// flushed WAL, all a walsender sends: pg_current_wal_lsn() may be ahead of it on an idle
// primary, a record written but not flushed, and never reached).
func receivesFrom(ctx context.Context, c *pgx.Conn, primary *Endpoint) string {
	if primary == nil {
		return "in recovery, streaming not judged (no primary to compare its WAL with; " + statusHidden + ")"
	}
	p, err := pgx.Connect(ctx, primary.Conn)
	if err != nil {
		return "in recovery, streaming not judged (primary " + primary.Name + " not reached; " + statusHidden + ")"
	}
	var at string
	err = p.QueryRow(ctx, `SELECT pg_current_wal_flush_lsn()::text`).Scan(&at)
	p.Close(context.WithoutCancel(ctx))
	if err != nil {
		return "in recovery, streaming not judged (" + err.Error() + "; " + statusHidden + ")"
	}
	deadline := time.Now().Add(streamWait)
	for {
		var got *string
		var ok *bool
		// Replayed counts as had: a standby that replayed its own pg_wal past the point its
		// receiver asked the primary to stream from shows that point as received until new
		// WAL comes, which an idle primary never sends.
		err := c.QueryRow(ctx, `SELECT pg_last_wal_receive_lsn()::text,
  GREATEST(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn()) >= $1::pg_lsn`, at).Scan(&got, &ok)
		switch {
		case err != nil:
			return "in recovery, streaming not judged (" + err.Error() + "; " + statusHidden + ")"
		case ok != nil && *ok:
			return "streaming"
		case time.Now().After(deadline) || ctx.Err() != nil:
			recv := "nothing"
			if got != nil {
				recv = "up to " + *got
			}
			return fmt.Sprintf("in recovery, not streaming (received %s, not %s's %s within %v; %s)", recv, primary.Name, at, streamWait, statusHidden)
		}
		sleep(ctx, 50*time.Millisecond)
	}
}

// whole says whether exactly one node accepts writes and every other streams from it.
func (e *Endpoints) whole(ctx context.Context) string {
	w := e.writableNames(ctx)
	if len(w) != 1 {
		return fmt.Sprintf("not whole: %d nodes accept writes (%s)", len(w), strings.Join(w, ", "))
	}
	var bad, ok []string
	judged := false
	for _, n := range e.Nodes {
		if n.Name == w[0] {
			continue
		}
		s, byPosition := e.state(ctx, &n, e.node(w[0]))
		if s != "streaming" {
			bad = append(bad, n.Name+": "+s)
		} else {
			ok = append(ok, n.Name)
			judged = judged || byPosition
		}
	}
	if len(bad) > 0 {
		return fmt.Sprintf("not whole: primary %s; %s", w[0], strings.Join(bad, "; "))
	}
	s := fmt.Sprintf("whole: primary %s, streaming standbys %s", w[0], strings.Join(ok, ", "))
	if judged {
		s += " (streaming judged by pg_last_wal_receive_lsn() reaching the primary's pg_current_wal_flush_lsn(): " + statusHidden + ")"
	}
	return s
}

// commitMode is sync when the primary's synchronous_standby_names names a standby, else
// async ("unknown" when it cannot be read).
func (e *Endpoints) commitMode(ctx context.Context, primary *Endpoint) string {
	c, err := pgx.Connect(ctx, primary.Conn)
	if err != nil {
		return "unknown"
	}
	defer c.Close(context.WithoutCancel(ctx))
	var names string
	if err := c.QueryRow(ctx, `SELECT current_setting('synchronous_standby_names')`).Scan(&names); err != nil {
		return "unknown"
	}
	if strings.TrimSpace(names) == "" {
		return "async"
	}
	return "sync"
}

// observedCommit is the cluster's commit mode: the primary's (commitMode), but sync whenever
// Patroni's synchronous_mode is on. Patroni then owns synchronous_standby_names, which is
// empty while it names no synchronous standby (its view not whole yet, or without strict
// mode after a failover): read at such a moment, the primary alone would say async, and the
// new primary's time without a synchronous standby would go unmeasured.
func observedCommit(primarySays string, patroniSyncMode bool) string {
	if patroniSyncMode {
		return "sync"
	}
	return primarySays
}
