package drill

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/render"
	"github.com/agbench/agbench/internal/stats"
)

// TestPatroniFailsOverByItself runs kill-primary on a cluster under Patroni with
// synchronous_mode, three ways, one cycle each:
//   - Patroni and the postmaster killed (a crash of the machine): Patroni, not agbench,
//     promotes the standby; no acknowledged commit is lost; Patroni's timeline is recorded
//     and the old primary streams again once its Patroni is started again.
//   - Only the postmaster killed: Patroni restarts it in place, and the drill says so
//     (no failover, the same node primary) rather than calling it one.
//   - observe, through connection strings and Patroni's REST URLs only: the drill asks
//     Patroni for a switchover and loses no acknowledged commit.
//   - Only Patroni killed: the standby is promoted while the old postmaster still accepts
//     writes; the drill reports the split brain and fails.
func TestPatroniFailsOverByItself(t *testing.T) {
	t.Parallel() // owns its cluster: it kills Patroni members
	clustertest.RequirePatroni(t)
	topo := clustertest.NewIn(t, clustertest.Home(t), clustertest.Options{Standbys: 1, Commit: cluster.CommitSync, HA: cluster.HAPatroni})
	if topo.Patroni == nil || !topo.Patroni.SynchronousMode {
		t.Fatalf("not under Patroni with synchronous_mode: %+v", topo.Patroni)
	}

	t.Run("both", func(t *testing.T) {
		from := topo.Primary().Name
		// Before the fault the standby loses its synchronous status, as when its Patroni is
		// starved for ttl on a loaded machine: the drill waits until Patroni gives it back
		// (killed before, the leader is never replaced in synchronous_mode).
		hooks := &Hooks{BeforeFault: func(ctx context.Context, c *Cycle) error { return loseSyncStandby(ctx, t, topo) }}
		run, res, err := drill(t, context.Background(), topo, Options{Fault: FaultKillPrimary, Cycles: 1, Hooks: hooks})
		if err != nil {
			t.Fatalf("drill: %v (%+v)", err, run)
		}
		t.Log(run.Verdict)
		dc := cycles(t, res)[0]
		if !dc.Checked || lostOf(dc) != 0 || dc.Acked == 0 {
			t.Fatalf("checked %v, %d of %d acknowledged commits lost: %v", dc.Checked, lostOf(dc), dc.Acked, dc.Problems)
		}
		if dc.To == from || dc.To == "" || !strings.Contains(dc.HAOutcome, "Patroni promoted "+dc.To) || dc.PGTimeline < 2 {
			t.Fatalf("from %s to %s: outcome %q, timeline %d", from, dc.To, dc.HAOutcome, dc.PGTimeline)
		}
		if dc.OldPrimary != "streaming" || len(dc.Writable) != 1 || dc.FailoverSeconds == nil || dc.WriteBackSeconds == nil {
			t.Fatalf("old primary %q, writable %v, failover %v, writes back %v: %v", dc.OldPrimary, dc.Writable, dc.FailoverSeconds, dc.WriteBackSeconds, dc.Problems)
		}
		if run.Patroni == nil || run.Patroni.TTL != cluster.DefaultPatroniTTL || run.Patroni.LoopWait != cluster.DefaultPatroniLoopWait || run.Patroni.Kill != KillBoth {
			t.Fatalf("run's Patroni section %+v", run.Patroni)
		}
		if topo.Primary().Name != dc.To {
			t.Fatalf("topology names %s primary, Patroni promoted %s", topo.Primary().Name, dc.To)
		}
		// Without synchronous_mode_strict, the one standby promoted, Patroni empties its
		// synchronous_standby_names: it acknowledges commits alone until the old primary
		// rejoins (its Patroni started again, pg_rewind, streaming) as its synchronous standby.
		if run.Patroni.SynchronousModeStrict == nil || *run.Patroni.SynchronousModeStrict {
			t.Fatalf("synchronous_mode_strict %v, want false read from GET /config", run.Patroni.SynchronousModeStrict)
		}
		g := dc.SyncGap
		if g == nil || g.Note != "" || g.NoSyncSeconds == nil || *g.NoSyncSeconds <= 0 || g.NoSyncAcked == 0 {
			t.Fatalf("no gap without a synchronous standby measured: %+v", g)
		}
		// The span ends when the old primary is named synchronous; a sample or two may then
		// see it named but still streaming as async, until its walsender reads the setting
		// (a short wait before SyncAt, TestSyncGapHandoverWaitIsNotStrict).
		if g.Cause != "Patroni synchronous_mode without strict" || g.SyncAt == nil || g.OldPrimary != from || *g.NoSyncFrom >= *g.NoSyncTo || *g.NoSyncTo > *g.SyncAt {
			t.Fatalf("gap %+v: %s", g, render.SyncGapSentence(g))
		}
		if *g.NoSyncTo != *g.SyncAt && (g.WaitedFrom == nil || *g.WaitedFrom != *g.NoSyncTo || *g.WaitedTo != *g.SyncAt) {
			t.Fatalf("between the span without a synchronous standby and %s's return: %s", from, render.SyncGapSentence(g))
		}
		if dc.SyncWait != "" {
			t.Fatalf("writes back said to wait for the old primary, without strict mode: %q", dc.SyncWait)
		}
		if run.NoSyncCycles != 1 || !strings.Contains(run.Verdict, "with no synchronous standby") {
			t.Fatalf("run: %d cycles without a synchronous standby; verdict %q", run.NoSyncCycles, run.Verdict)
		}
		t.Log(render.SyncGapSentence(g))
	})

	t.Run("observe", func(t *testing.T) { observeThroughURLs(t, topo) })

	t.Run("postmaster", func(t *testing.T) {
		from := topo.Primary().Name
		run, res, err := drill(t, context.Background(), topo, Options{Fault: FaultKillPrimary, Kill: KillPostmaster, Cycles: 1})
		if err != nil {
			t.Fatalf("drill: %v (%+v)", err, run)
		}
		dc := cycles(t, res)[0]
		if dc.To != from || dc.OldPrimary != OldPrimaryRestartedInPlace || !strings.Contains(dc.HAOutcome, "in place") {
			t.Fatalf("from %s to %s, old primary %q, outcome %q", from, dc.To, dc.OldPrimary, dc.HAOutcome)
		}
		if !dc.Checked || lostOf(dc) != 0 || len(dc.Writable) != 1 {
			t.Fatalf("checked %v, lost %d, writable %v: %v", dc.Checked, lostOf(dc), dc.Writable, dc.Problems)
		}
	})

	t.Run("patroni", func(t *testing.T) {
		from := topo.Primary().Name
		run, res, err := drill(t, context.Background(), topo, Options{Fault: FaultKillPrimary, Kill: KillPatroni, Cycles: 1})
		if err == nil {
			t.Fatalf("a drill with a split brain passed: %+v", run)
		}
		dc := cycles(t, res)[0]
		if len(dc.SplitBrain) != 2 || !slices.Contains(dc.SplitBrain, from) || !slices.Contains(dc.SplitBrain, dc.To) {
			t.Fatalf("split brain %v (from %s to %s): %v", dc.SplitBrain, from, dc.To, dc.Problems)
		}
		if !slices.ContainsFunc(run.Failed, func(s string) bool { return strings.Contains(s, "split brain") }) {
			t.Fatalf("failed checks %v lack the split brain", run.Failed)
		}
		t.Logf("split brain: %v; %d of %d acknowledged commits lost", dc.SplitBrain, lostOf(dc), dc.Acked)
		if !strings.HasPrefix(run.Left, "whole") {
			t.Fatalf("cluster not healed: %s", run.Left)
		}
	})
}

// loseSyncStandby stops the standby's Patroni (SIGSTOP) until its member key has expired and
// the leader's Patroni has taken its synchronous status away (it clears /sync first, then the
// primary's synchronous_standby_names), then resumes it.
func loseSyncStandby(ctx context.Context, t *testing.T, topo *cluster.Topology) error {
	sb := topo.Standbys()[0].Name
	pid, err := topo.OwnPatroni(sb)
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return err
	}
	defer syscall.Kill(pid, syscall.SIGCONT)
	deadline := time.Now().Add(time.Duration(topo.Patroni.TTL)*time.Second + 60*time.Second)
	for {
		var ssn string
		c, err := topo.Connect(ctx, topo.Primary())
		if err == nil {
			err = c.QueryRow(ctx, `SHOW synchronous_standby_names`).Scan(&ssn)
			c.Close(ctx)
		}
		if err == nil && ssn == "" {
			t.Logf("%s's Patroni stopped: Patroni took its synchronous status away", sb)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s's Patroni stopped, and the primary's synchronous_standby_names is still %q (%v)", sb, ssn, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// observe, as an ordinary login (no pg_monitor) and without Patroni's REST APIs, on a cluster
// under Patroni that recovers by other means:
//   - restart in place: the primary's postmaster killed, its Patroni, still the leader,
//     restarts it: no failover. The drill recognises it (a later postmaster start time on
//     the same node), times the writes blocked, checks every acknowledged commit on the
//     restarted primary, and finds the cluster whole at the end from what the login may read.
//   - switchover asked of Patroni: the drill, given the REST APIs, asks for it once the
//     servers' view is whole, judged as the ordinary login.
//   - switchover: asked of Patroni's REST API by the test, not the drill. Patroni demotes
//     the primary first; the cycle is timed from when its writes degraded, not from when it
//     stopped answering, and says which start it used.
func TestObserveUnderPatroniByOtherMeans(t *testing.T) {
	t.Parallel() // owns its cluster: it kills its primary's postmaster
	clustertest.RequirePatroni(t)
	topo := clustertest.NewIn(t, clustertest.Home(t), clustertest.Options{Standbys: 1, Commit: cluster.CommitSync, HA: cluster.HAPatroni})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const user, pw = "observer", "observer-secret"
	c, err := topo.Connect(ctx, topo.Primary())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"CREATE ROLE " + user + " LOGIN PASSWORD '" + pw + "'", "GRANT CREATE ON SCHEMA public TO " + user} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	c.Close(ctx)
	if err := topo.WaitCaughtUp(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	url := func(n *cluster.Node) string {
		return fmt.Sprintf("%s=postgres://%s:%s@%s:%d/%s?sslmode=disable", n.Name, user, pw, n.Host, n.ClientPort(), topo.Database)
	}
	endpoints := func(t *testing.T) (*Endpoints, *cluster.Node, *cluster.Node) {
		if err := topo.WaitPatroniWhole(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := topo.FollowPatroni(ctx); err != nil {
			t.Fatal(err)
		}
		from, to := topo.Primary(), topo.Standbys()[0]
		e, err := NewEndpoints(url(from), []string{url(to)}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Check(ctx); err != nil {
			t.Fatal(err)
		}
		return e, from, to
	}

	t.Run("restart in place", func(t *testing.T) {
		e, from, _ := endpoints(t)
		hooks := &Hooks{BeforeFault: func(ctx context.Context, c *Cycle) error { return topo.CrashNode(ctx, from.Name) }}
		run, res, err := observe(t, e, Options{Hooks: hooks, ObserveWait: 2 * time.Minute})
		if err != nil {
			t.Fatalf("drill: %v (%+v)", err, run)
		}
		t.Log(run.Verdict)
		t.Log(run.Left)
		dc := cycles(t, res)[0]
		if dc.To != from.Name || dc.OldPrimary != OldPrimaryRestarted || !strings.Contains(dc.HAOutcome, "restarted in place") {
			t.Fatalf("from %s to %s, old primary %q, outcome %q: %v", from.Name, dc.To, dc.OldPrimary, dc.HAOutcome, dc.Problems)
		}
		if !dc.Checked || lostOf(dc) != 0 || dc.Acked == 0 || dc.WritesBlockedSeconds == nil || *dc.WritesBlockedSeconds <= 0 {
			t.Fatalf("checked %v, %d of %d lost, writes blocked %v: %v", dc.Checked, lostOf(dc), dc.Acked, dc.WritesBlockedSeconds, dc.Problems)
		}
		if run.RestartedInPlace != 1 || !strings.Contains(run.Verdict, "restarted in place") || !strings.Contains(run.Verdict, "writes blocked") {
			t.Fatalf("verdict %q", run.Verdict)
		}
		if !strings.HasPrefix(run.Left, "whole") || !strings.Contains(run.Left, "pg_read_all_stats") {
			t.Fatalf("left %q: want whole, judged by WAL positions, naming the privilege", run.Left)
		}
	})

	// With Patroni's REST APIs the drill asks for the switchover itself, and first waits
	// until the servers' view is whole: as the ordinary login, from WAL positions.
	t.Run("switchover asked of Patroni", func(t *testing.T) {
		e, from, to := endpoints(t)
		e.Patroni = []string{from.RESTURL(), to.RESTURL()}
		run, res, err := observe(t, e, Options{ObserveWait: 2 * time.Minute})
		if err != nil {
			t.Fatalf("drill: %v (%+v)", err, run)
		}
		t.Log(run.Verdict)
		if dc := cycles(t, res)[0]; dc.To != to.Name || !dc.Checked || lostOf(dc) != 0 || !strings.HasPrefix(dc.HAOutcome, "switchover") {
			t.Fatalf("from %s to %s, checked %v, lost %d, outcome %q: %v", from.Name, dc.To, dc.Checked, lostOf(dc), dc.HAOutcome, dc.Problems)
		}
	})

	t.Run("switchover", func(t *testing.T) {
		e, from, to := endpoints(t)
		switched := make(chan error, 1)
		hooks := &Hooks{BeforeFault: func(ctx context.Context, c *Cycle) error {
			go func() {
				_, err := cluster.PatroniSwitchoverAt(context.WithoutCancel(ctx), from.RESTURL(), from.Name, "")
				switched <- err
			}()
			return nil
		}}
		run, res, err := observe(t, e, Options{Hooks: hooks, ObserveWait: 2 * time.Minute, Between: 4 * time.Second})
		if serr := <-switched; serr != nil {
			t.Fatalf("the test's switchover: %v", serr)
		}
		if err != nil {
			t.Fatalf("drill: %v (%+v)", err, run)
		}
		t.Log(run.Verdict)
		dc := cycles(t, res)[0]
		t.Logf("fault timed from %s", dc.FaultStart)
		if dc.To != to.Name || !dc.Checked || lostOf(dc) != 0 {
			t.Fatalf("from %s to %s, checked %v, lost %d: %v", from.Name, dc.To, dc.Checked, lostOf(dc), dc.Problems)
		}
		// No interval before the fault's own had writes degraded: the fault is when they
		// first fell, not when the demoted primary stopped answering.
		tl := dc.Timeline
		iv := time.Duration(tl.IntervalMS) * time.Millisecond
		f := int(dc.FaultAt.Sub(tl.Start) / iv)
		var level []float64
		for _, w := range tl.Writes[10:f] {
			level = append(level, float64(w))
		}
		steady := stats.Median(level)
		t.Logf("writes per %v before the fault: %v (steady %.0f)", iv, tl.Writes[max(f-20, 0):f], steady)
		if float64(tl.Writes[f-1]) < steady/2 {
			t.Fatalf("writes had fallen to %d of a steady %.0f per %v before the fault: the demotion is not timed", tl.Writes[f-1], steady, iv)
		}
		if !strings.HasPrefix(dc.FaultStart, "when ") {
			t.Fatalf("the cycle does not say which start it used: %q", dc.FaultStart)
		}
	})
}
