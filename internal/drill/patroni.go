package drill

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/result"
)

// A drill on a cluster under Patroni (cluster create --ha patroni): agbench injects the
// fault and then only watches — Patroni's REST API says when, and whom, Patroni promoted —
// and heals what it broke (it starts a killed Patroni again, as the node's service manager
// would). It never promotes a node itself.

// What kill-primary kills under Patroni.
const (
	// KillBoth kills the primary's Patroni and its postmaster, as a crash of its machine
	// would: Patroni's leader key expires after ttl and a standby's Patroni promotes it.
	KillBoth = "both"
	// KillPostmaster kills only the postmaster: its Patroni, still the leader, starts it
	// again in place (no failover).
	KillPostmaster = "postmaster"
	// KillPatroni kills only Patroni: a standby is promoted while the old postmaster goes on
	// accepting writes (no watchdog here) — a split brain that the checks must catch.
	KillPatroni = "patroni"
)

// Kills lists what --kill takes.
var Kills = []string{KillBoth, KillPostmaster, KillPatroni}

// OldPrimaryRestartedInPlace is a cycle's OldPrimary when Patroni restarted the killed
// primary's PostgreSQL on the same node instead of failing over.
const OldPrimaryRestartedInPlace = "restarted in place by Patroni"

// patroniOutcomeWait bounds the wait for Patroni to promote or restart after a kill, beyond
// its ttl.
const patroniOutcomeWait = 60 * time.Second

// oldPrimaryBack reports whether the cycle's old primary is where it should be: streaming
// from the new one after a failover, or the primary again after a restart in place.
func oldPrimaryBack(dc *result.DrillCycle) bool {
	return dc.OldPrimary == "streaming" || dc.OldPrimary == OldPrimaryRestartedInPlace && dc.To == dc.From ||
		dc.Fault == FaultObserve // reported, not checked: the failover's owner brings it back
}

// patroniOf is the run's record of Patroni's settings (nil without Patroni).
func patroniOf(t *cluster.Topology, o Options) *result.DrillPatroni {
	if t.Patroni == nil {
		return nil
	}
	d := &result.DrillPatroni{PatroniTiming: t.Patroni.PatroniTiming}
	if o.Fault == FaultKillPrimary {
		d.Kill = killOf(o)
	}
	return d
}

// patroniSync reads Patroni's synchronous_mode_strict from its GET /config (absent when no
// REST API answered) and names what decides the new primary's synchronous standbys after a
// failover; syncMode is true when GET /config said synchronous_mode is on.
func patroniSync(ctx context.Context, urls []string) (strict *bool, cause string, syncMode bool) {
	cfg, err := cluster.PatroniConfigAt(ctx, urls...)
	switch {
	case err != nil:
		return nil, "Patroni", false
	case !cfg.SynchronousMode:
		return &cfg.SynchronousModeStrict, "Patroni without synchronous_mode", false
	case cfg.SynchronousModeStrict:
		return &cfg.SynchronousModeStrict, "Patroni synchronous_mode_strict", true
	}
	return &cfg.SynchronousModeStrict, "Patroni synchronous_mode without strict", true
}

func killOf(o Options) string {
	if o.Kill == "" {
		return KillBoth
	}
	return o.Kill
}

// checkPatroni refuses, before any cycle, --kill without Patroni, and a cluster under Patroni
// whose Patroni processes are not the ones this agbench started.
func checkPatroni(t *cluster.Topology, o Options) error {
	if t.Patroni == nil {
		if o.Kill != "" {
			return agerr.BadInputf("--kill %s: only on a cluster under Patroni (cluster create --ha patroni); here agbench kills the postmaster", o.Kill)
		}
		return nil
	}
	var errs []error
	if !slices.Contains([]string{FaultPlanned, FaultKillPrimary, FaultObserve}, o.Fault) {
		errs = append(errs, agerr.BadInputf("--fault %s: not on a cluster under Patroni yet (planned, kill-primary and observe are): its failover is Patroni's, which agbench does not drive", o.Fault))
	}
	for _, n := range t.Nodes {
		if _, err := t.OwnPatroni(n.Name); err != nil {
			errs = append(errs, agerr.BadInputf("cluster %s: %v (agbench cluster start %s)", t.Name, err, t.Name))
		}
	}
	return agerr.Join(errs...)
}

// injectPatroni injects the fault into a cluster under Patroni and waits for Patroni's
// answer: a switchover it was asked for, a promotion after a kill, or a restart in place.
// The report's WriteOutage is from the fault until Patroni's REST API showed the new
// primary running. Once the fault is in, the healing runs to its end whatever ctx does.
func injectPatroni(ctx context.Context, t *cluster.Topology, o Options, c *Cycle, dc *result.DrillCycle, p Progress) (*cluster.FailoverReport, error) {
	if err := wholeBeforeFault(ctx, t.PatroniWhole(), t.WaitPatroniWhole, c, p); err != nil {
		return nil, err
	}
	hctx := context.WithoutCancel(ctx)
	switch o.Fault {
	case FaultPlanned:
		dc.FaultAt = time.Now()
		c.tally.fault(dc.FaultAt)
		p("cycle %d: POST /switchover to %s's Patroni", c.N, dc.From)
		dc.WALBytesNote = "a switchover shuts the old primary down cleanly first"
		rep, err := t.Failover(hctx, cluster.FailoverOptions{})
		if rep != nil {
			dc.HAOutcome = "switchover: Patroni promoted " + rep.To
			dc.PGTimeline = timelineOf(hctx, t.Node(rep.To))
		}
		return rep, err
	case FaultKillPrimary:
		return killUnderPatroni(hctx, t, o, c, dc, p)
	}
	return nil, fmt.Errorf("fault %q: not implemented under Patroni", o.Fault)
}

// wholeBeforeFault waits, before the fault, until Patroni's view of the cluster is whole
// (w: a running leader, every other member streaming and, in synchronous_mode, a
// synchronous standby), and until wait says the servers agree (their standbys stream); it
// notes when in the cycle's events. In synchronous_mode Patroni promotes only the member its
// /sync key names: a leader lost while the key names none is never replaced. The key loses
// its standby whenever that standby's Patroni has not refreshed its member key for ttl (a
// Patroni or an etcd starved of CPU on a loaded machine, or just started again; measured here
// by stopping the standby's Patroni for ttl: /sync said sync_standby null, and after the
// leader's kill in that window Patroni answered "following a different leader because i am
// not the healthiest node" for as long as it was watched, and a switchover asked meanwhile
// is refused for want of a candidate). The leader gives the status back a loop or two after
// the member key returns; a fault injected before then measures Patroni's refusal to fail
// over to a standby it does not know to be synchronous, not a failover. Both the drill on
// agbench's cluster (inject) and observe through REST URLs (awaitFailover) wait here.
func wholeBeforeFault(ctx context.Context, w cluster.PatroniWhole, wait func(context.Context) error, c *Cycle, p Progress) error {
	problem, v := w.Problem(ctx)
	if problem != "" {
		p("cycle %d: Patroni's cluster is not whole (%s: %s): waiting for it before the fault", c.N, problem, patroniSummary(v))
	}
	if err := wait(ctx); err != nil {
		return fmt.Errorf("before the fault: %w", err)
	}
	_, v = w.Problem(ctx)
	if problem != "" {
		p("cycle %d: Patroni's cluster is whole again (%s)", c.N, patroniSummary(v))
	}
	c.tally.event(result.EventWhole, time.Now(), patroniSummary(v))
	return nil
}

// patroniSummary is Patroni's view in a few words ("primary leader running, standby1 replica
// streaming"; "no view" when no REST API answered).
func patroniSummary(v *cluster.PatroniView) string {
	if v == nil {
		return "no view"
	}
	var parts []string
	for _, m := range v.Members {
		parts = append(parts, m.Name+" "+m.Role+" "+m.State)
	}
	return strings.Join(parts, ", ")
}

// killUnderPatroni kills what --kill names on the primary, waits for Patroni to promote a
// standby or restart the primary in place, looks for a split brain before healing, then
// starts the killed Patroni again and waits until the old primary streams.
func killUnderPatroni(ctx context.Context, t *cluster.Topology, o Options, c *Cycle, dc *result.DrillCycle, p Progress) (*cluster.FailoverReport, error) {
	from := t.Node(dc.From)
	kill := killOf(o)
	var before string
	if s, err := cluster.PatroniStateAt(ctx, from.RESTURL()); err == nil {
		before = s.PostmasterStart
	}
	rep := &cluster.FailoverReport{From: from.Name, Problems: map[string]string{}}
	dc.FaultAt = time.Now()
	c.tally.fault(dc.FaultAt)
	if kill == KillBoth || kill == KillPatroni {
		if err := t.KillPatroni(from.Name); err != nil {
			return nil, fmt.Errorf("kill %s's Patroni: %w", from.Name, err)
		}
	}
	if kill == KillBoth || kill == KillPostmaster {
		if err := t.CrashNode(ctx, from.Name); err != nil {
			return nil, fmt.Errorf("kill %s: %w", from.Name, err)
		}
		c.tally.gone(time.Now())
	}
	p("cycle %d: killed %s of %s (SIGKILL); waiting for Patroni (ttl %ds, loop_wait %ds)", c.N, killWords(kill), from.Name, t.Patroni.TTL, t.Patroni.LoopWait)
	if o.Hooks != nil && o.Hooks.BeforeFailover != nil {
		if err := o.Hooks.BeforeFailover(ctx, c); err != nil {
			return nil, err
		}
	}
	if kill == KillBoth {
		walLacked(ctx, t, dc)
	} else {
		dc.WALBytesNote = "not measured: the killed primary's PostgreSQL did not stay down"
	}
	to, tl, err := waitPatroniOutcome(ctx, t, from, before, time.Duration(t.Patroni.TTL)*time.Second+patroniOutcomeWait)
	if err != nil {
		problem, v := t.PatroniWhole().Problem(ctx)
		err = fmt.Errorf("%w; Patroni's view: %s (%s)", err, patroniSummary(v), problem)
		healPatroni(ctx, t, from, rep)
		return nil, err
	}
	rep.To, rep.WriteOutage, dc.PGTimeline = to.Name, time.Since(dc.FaultAt), tl
	if to == from {
		dc.HAOutcome = fmt.Sprintf("Patroni restarted %s's PostgreSQL in place (it still held the leader key): no failover", from.Name)
		rep.OldPrimary = OldPrimaryRestartedInPlace
	} else {
		dc.HAOutcome = "Patroni promoted " + to.Name
	}
	p("cycle %d: %s after %.2fs (timeline %d)", c.N, dc.HAOutcome, rep.WriteOutage.Seconds(), tl)
	dc.SplitBrain = writable(ctx, t)
	if len(dc.SplitBrain) > 1 {
		dc.Problems = append(dc.Problems, fmt.Sprintf("split brain: %s accepted writes at once after Patroni promoted %s (its old primary's PostgreSQL was not stopped: no watchdog)",
			strings.Join(dc.SplitBrain, " and "), to.Name))
	}
	if _, err := t.FollowPatroni(ctx); err != nil {
		rep.Problems["patroni"] = err.Error()
	}
	if to != from {
		rep.OldPrimary = healPatroni(ctx, t, from, rep)
	} else if err := t.WaitPatroniWhole(ctx); err != nil {
		rep.Problems[from.Name] = err.Error()
	}
	if len(rep.Problems) == 0 {
		rep.Problems = nil
	}
	return rep, nil
}

func killWords(kill string) string {
	switch kill {
	case KillPostmaster:
		return "the postmaster"
	case KillPatroni:
		return "Patroni (not its postmaster)"
	}
	return "Patroni and the postmaster"
}

// waitPatroniOutcome waits until Patroni's REST API shows a node other than from running
// as primary, or from's own PostgreSQL restarted in place (a new postmaster start time),
// and returns that node and the timeline it reports.
func waitPatroniOutcome(ctx context.Context, t *cluster.Topology, from *cluster.Node, before string, bound time.Duration) (*cluster.Node, int, error) {
	deadline := time.Now().Add(bound)
	for {
		for i := range t.Nodes {
			n := &t.Nodes[i]
			s, err := cluster.PatroniStateAt(ctx, n.RESTURL())
			if err != nil || !s.IsPrimary() {
				continue
			}
			if n != from || (before != "" && s.PostmasterStart != before) {
				return n, s.Timeline, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, 0, fmt.Errorf("Patroni neither promoted a standby nor restarted %s within %v", from.Name, bound)
		}
		sleep(ctx, 20*time.Millisecond)
	}
}

// healPatroni starts the old primary's Patroni again when it was killed (Patroni then
// rewinds it and starts it as a standby, or demotes a PostgreSQL still running as primary)
// and waits until Patroni's view is whole; it says in a word where the old primary is.
func healPatroni(ctx context.Context, t *cluster.Topology, from *cluster.Node, rep *cluster.FailoverReport) string {
	if _, err := t.OwnPatroni(from.Name); err != nil {
		if err := t.StartPatroni(from.Name); err != nil {
			rep.Problems[from.Name] = err.Error()
			return "Patroni not restarted"
		}
	}
	if err := t.WaitPatroniWhole(ctx); err != nil {
		rep.Problems[from.Name] = err.Error()
		return "not streaming"
	}
	return "streaming"
}

// timelineOf is the timeline Patroni's REST API reports for n (0 when it does not answer).
func timelineOf(ctx context.Context, n *cluster.Node) int {
	s, err := cluster.PatroniStateAt(ctx, n.RESTURL())
	if err != nil {
		return 0
	}
	return s.Timeline
}

// walLacked measures, under Patroni (which promotes by itself, so agbench's failover does not
// measure it), the WAL that the most advanced standby lacks of the killed primary's: the
// primary's end of valid WAL (pg_waldump) minus the standby's received position.
// Unmeasured, it is absent with the reason.
func walLacked(ctx context.Context, t *cluster.Topology, dc *result.DrillCycle) {
	var best uint64
	var from string
	for _, s := range t.Standbys() {
		lsn, err := t.ReceivedLSN(ctx, s.Name)
		if err != nil {
			continue
		}
		if v, err := cluster.ParseLSN(lsn); err == nil && (from == "" || v > best) {
			best, from = v, lsn
		}
	}
	if from == "" {
		dc.WALBytesNote = "not measured: no standby's received WAL position could be read"
		return
	}
	dc.WALBytesLacked, dc.WALBytesNote = t.WALLacked(ctx, dc.From, from)
}
