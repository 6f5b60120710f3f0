package cluster

import (
	"context"
	"fmt"
	"io"
	"maps"
	"regexp"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/status"
)

// Bounds of a failover's waits.
const (
	catchUpTimeout = 60 * time.Second
	promoteTimeout = 60 * time.Second
)

// FailoverOptions are the choices of `agbench cluster failover`.
type FailoverOptions struct {
	// To names the standby to promote; "" picks the most advanced one.
	To string
	// Force promotes a standby that is behind another (losing what only the other received).
	Force bool
	// Fence treats a running primary as failed (cut off from its standbys, say): its
	// processes are killed (FenceNode) before a standby is promoted, without waiting for
	// the standbys to catch up. Without it, a running primary that does not answer within
	// ProbeTimeout (frozen, hung) is fenced the same way; one that answers is handed over
	// in a planned failover.
	Fence bool
	// ProbeTimeout is how long the running primary may take to answer (0: DefaultProbeTimeout).
	ProbeTimeout time.Duration
	Progress     io.Writer
}

// A failover's report and its steps (status.FailoverReport).
type (
	FailoverReport = status.FailoverReport
	FailoverStep   = status.FailoverStep
)

// CommitsWaitedForOldPrimary reports whether the new primary's commits waited until the old
// primary rejoined: sync commit, not under Patroni (whose synchronous_mode decides), and no
// other standby re-pointed to the new primary, so that the old primary was the only
// synchronous standby the new one could have. Commits then came back at RejoinedAt, not at
// PromotedAt (never, when RejoinedAt is zero).
func (t *Topology) CommitsWaitedForOldPrimary(r *FailoverReport) bool {
	return t.Commit == CommitSync && t.Patroni == nil && len(r.Repointed) == 0
}

type stepClock struct {
	r    *FailoverReport
	last time.Time
	w    io.Writer
}

func (c *stepClock) done(name string) {
	now := time.Now()
	d := now.Sub(c.last)
	c.r.Steps = append(c.r.Steps, FailoverStep{Name: name, Duration: d})
	c.last = now
	progress(c.w, "%-44s %8.3fs", name, d.Seconds())
}

// Failover promotes a standby to primary. When the primary is up the failover is planned: the
// primary is shut down cleanly and the new primary replays all of its WAL first, so no
// committed transaction is lost, synchronous or not. The other standbys are re-pointed to
// the new primary, and the old primary comes back as a standby (pg_rewind where needed).
// The topology file follows every change. Cancelling ctx does not stop a failover that has
// begun.
func (t *Topology) Failover(ctx context.Context, o FailoverOptions) (*FailoverReport, error) {
	if t.Patroni != nil {
		return t.patroniFailover(ctx, o)
	}
	if err := t.checkFailoverTo(o.To); err != nil {
		return nil, err
	}
	// Once begun, a failover runs to its end even when interrupted (every wait has its own
	// bound): stopping half-way would leave no primary, or two.
	ctx = context.WithoutCancel(ctx)
	start := time.Now()
	old := t.Primary()
	r := &FailoverReport{From: old.Name, Problems: map[string]string{}}
	clock := &stepClock{r: r, last: start, w: o.Progress}

	var target *Node
	fenced, err := t.fenceFailed(ctx, old, o, r, clock)
	if err != nil {
		return nil, err
	}
	if !fenced && t.nodeRunning(old) {
		r.Planned = true
		target, err = t.plannedHandover(ctx, o, clock)
	} else {
		target, err = t.unplannedChoice(ctx, o)
	}
	if err != nil {
		return nil, err
	}
	r.To = target.Name
	if err := t.promote(ctx, old, target, r); err != nil {
		return nil, err
	}
	r.PromotedAt = time.Now()
	r.WriteOutage = r.PromotedAt.Sub(start)
	clock.done("promote " + target.Name + " (accepts writes)")

	if err := t.settleNewPrimary(ctx, target); err != nil {
		return nil, err
	}
	clock.done("slots and checkpoint on " + target.Name)
	t.repointOthers(ctx, old, r)
	clock.done("re-point other standbys")

	if !r.Planned {
		t.walLacked(ctx, old, target, r)
	}
	r.OldPrimary = t.rejoin(ctx, old, r)
	if r.OldPrimary == "streaming" {
		r.RejoinedAt = time.Now()
	}
	clock.done("old primary " + old.Name + " rejoins as standby")
	r.Total = time.Since(start)
	t.Failovers = append(t.Failovers, FailoverRecord{At: start.UTC(), From: r.From, To: r.To, Planned: r.Planned,
		WriteOutage: r.WriteOutage.Seconds(), Total: r.Total.Seconds()})
	if len(r.Problems) == 0 {
		r.Problems = nil
	}
	return r, t.Save()
}

// checkFailoverTo refuses, before anything changes, a failover with no standby or to a
// node (--to) that cannot take over.
func (t *Topology) checkFailoverTo(to string) error {
	if len(t.Standbys()) == 0 {
		return agerr.BadInputf("cluster %s has no standby to fail over to", t.Name)
	}
	if to == "" {
		return nil
	}
	n := t.Node(to)
	switch {
	case n == nil:
		return agerr.BadInputf("--to %s: no such node in cluster %s (nodes: %v)", to, t.Name, t.NodeNames())
	case n.Role != RoleStandby:
		return agerr.BadInputf("--to %s: it is the primary already", to)
	case !t.nodeRunning(n):
		return agerr.BadInputf("--to %s: it is not running (agbench cluster start)", to)
	}
	return nil
}

// promote makes target the primary, with the old primary's synchronous settings, and
// waits until it takes writes. A planned failover that fails before the promotion starts
// the old primary again.
func (t *Topology) promote(ctx context.Context, old, target *Node, r *FailoverReport) error {
	if err := t.armSync(ctx, target); err != nil {
		err = fmt.Errorf("give %s the primary's synchronous settings: %w", target.Name, err)
		if r.Planned {
			return t.restartAfter(ctx, old, err)
		}
		return err
	}
	if _, err := t.install().Run(ctx, t.user(), "pg_ctl", "promote", "-w", "-t", fmt.Sprint(int(promoteTimeout.Seconds())), "-D", target.DataDir); err != nil {
		err = fmt.Errorf("promote %s: %w", target.Name, err)
		if r.Planned {
			return t.restartAfter(ctx, old, err)
		}
		return err
	}
	// Roles change in the topology at once, so an interruption from here on leaves a file
	// that names the node that really is primary.
	old.Role, old.Slot = RoleStandby, old.Name
	target.Role, target.Slot = RolePrimary, ""
	if err := t.Save(); err != nil {
		return err
	}
	return t.waitWritable(ctx, target)
}

// settleNewPrimary gives the new primary a primary's configuration and a slot for every
// standby, and checkpoints it, since pg_rewind reads the new timeline from its control file.
func (t *Topology) settleNewPrimary(ctx context.Context, target *Node) error {
	if err := t.writeConf(target); err != nil {
		return err
	}
	if err := t.reload(ctx, target); err != nil {
		return err
	}
	for _, s := range t.Standbys() {
		if err := t.createSlot(ctx, target, s.Slot); err != nil {
			return err
		}
	}
	return t.execOn(ctx, target, "CHECKPOINT")
}

// repointOthers points every standby but the old primary at the new primary; one that
// fails is a problem of the report, not the end of the failover.
func (t *Topology) repointOthers(ctx context.Context, old *Node, r *FailoverReport) {
	for _, s := range t.Standbys() {
		if s == old {
			continue
		}
		if err := t.repoint(ctx, s); err != nil {
			r.Problems[s.Name] = err.Error()
			continue
		}
		r.Repointed = append(r.Repointed, s.Name)
	}
}

// syncArmWait bounds the wait for a standby to read the synchronous settings it is given
// before its promotion.
const syncArmWait = 30 * time.Second

// armSync gives the standby about to be promoted the primary's synchronous settings, its
// standby settings kept (it goes on streaming and replaying until the promotion), and waits
// until the server has read them. With sync commit, the new primary's first commit then
// waits for a synchronous standby, as every commit of the old primary did: promoted without
// them, it acknowledged commits that no other node had (under sync commit, commits that one
// more failure would lose) until agbench.conf was rewritten after the promotion, and then
// blocked until a standby streamed from it. With async commit there is nothing to give.
func (t *Topology) armSync(ctx context.Context, n *Node) error {
	sync := t.syncSettings(n)
	if len(sync) == 0 {
		return nil
	}
	s := t.nodeSettings(n) // still a standby's
	maps.Copy(s, sync)
	if err := t.writeSettings(n, s); err != nil {
		return err
	}
	if err := t.reload(ctx, n); err != nil {
		return err
	}
	// The postmaster signals its children once it has read the file: a session that starts
	// after it sees the new value, and the checkpointer (which tells the backends whether
	// synchronous standbys are defined) has been signalled.
	want := sync["synchronous_standby_names"]
	deadline := time.Now().Add(syncArmWait)
	for {
		c, err := t.Connect(ctx, n)
		if err == nil {
			var got string
			err = c.QueryRow(ctx, `SHOW synchronous_standby_names`).Scan(&got)
			c.Close(context.WithoutCancel(ctx))
			if err == nil && got == want {
				return nil
			}
			if err == nil {
				err = fmt.Errorf("synchronous_standby_names is %q, want %q", got, want)
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not read its new settings within %v: %v", n.Name, syncArmWait, err)
		}
		if err := sleepCtx(ctx, 10*time.Millisecond); err != nil {
			return err
		}
	}
}

// plannedHandover shuts the primary down cleanly and waits until the target has replayed its
// last WAL record (the shutdown checkpoint). When that fails the primary is restarted.
func (t *Topology) plannedHandover(ctx context.Context, o FailoverOptions, clock *stepClock) (*Node, error) {
	old := t.Primary()
	target, err := t.pickTarget(ctx, o.To)
	if err != nil {
		return nil, err
	}
	if err := t.stopNode(ctx, old, "fast"); err != nil {
		return nil, err
	}
	clock.done("stop " + old.Name + " (clean shutdown)")
	out, err := t.install().Run(ctx, t.user(), "pg_controldata", "-D", old.DataDir)
	if err != nil {
		return nil, t.restartAfter(ctx, old, err)
	}
	ckpt, err := parseCheckpointLSN(out)
	if err != nil {
		return nil, t.restartAfter(ctx, old, err)
	}
	if err := t.waitReplayedPast(ctx, target, ckpt, catchUpTimeout); err != nil {
		return nil, t.restartAfter(ctx, old, err)
	}
	clock.done(fmt.Sprintf("%s replays up to %s", target.Name, ckpt))
	return target, nil
}

func (t *Topology) restartAfter(ctx context.Context, old *Node, cause error) error {
	if err := t.startNode(context.WithoutCancel(ctx), old); err != nil {
		return fmt.Errorf("failover cancelled (%v), and restarting %s failed: %w", cause, old.Name, err)
	}
	return fmt.Errorf("failover cancelled, %s restarted as primary: %w", old.Name, cause)
}

var checkpointRE = regexp.MustCompile(`(?m)^Latest checkpoint location:\s+([0-9A-F]+/[0-9A-F]+)`)

func parseCheckpointLSN(controldata string) (string, error) {
	m := checkpointRE.FindStringSubmatch(controldata)
	if m == nil {
		return "", fmt.Errorf("pg_controldata shows no latest checkpoint location")
	}
	return m[1], nil
}

// unplannedChoice picks the standby that received the most WAL when the primary is down.
// A named standby that is behind another is refused without Force: promoting it would lose
// transactions that only the other received (committed ones, under synchronous commit).
func (t *Topology) unplannedChoice(ctx context.Context, o FailoverOptions) (*Node, error) {
	best, err := t.pickTarget(ctx, "")
	if err != nil {
		return nil, err
	}
	if o.To == "" || o.To == best.Name {
		return best, nil
	}
	named := t.Node(o.To)
	behind, err := t.receivedBehind(ctx, named, best)
	if err != nil {
		return nil, err
	}
	if behind > 0 && !o.Force {
		return nil, agerr.BadInputf("--to %s: it received %d bytes less WAL than %s; promoting it would lose transactions (committed ones under sync commit). Fail over to %s, or pass --force",
			named.Name, behind, best.Name, best.Name)
	}
	return named, nil
}

// pickTarget returns the named standby, or the running standby with the highest received LSN.
func (t *Topology) pickTarget(ctx context.Context, name string) (*Node, error) {
	if name != "" {
		return t.Node(name), nil
	}
	var best *Node
	var bestLSN string
	for _, s := range t.Standbys() {
		if !t.nodeRunning(s) {
			continue
		}
		lsn, err := t.receivedLSN(ctx, s)
		if err != nil {
			continue
		}
		if best == nil || lsnLess(bestLSN, lsn) {
			best, bestLSN = s, lsn
		}
	}
	if best == nil {
		return nil, fmt.Errorf("no standby of %s is running and reachable", t.Name)
	}
	return best, nil
}

func (t *Topology) receivedLSN(ctx context.Context, n *Node) (string, error) {
	c, err := t.Connect(ctx, n)
	if err != nil {
		return "", err
	}
	defer c.Close(context.WithoutCancel(ctx))
	var lsn string
	err = c.QueryRow(ctx, `SELECT greatest(coalesce(pg_last_wal_receive_lsn(), '0/0'), coalesce(pg_last_wal_replay_lsn(), '0/0'))::text`).Scan(&lsn)
	return lsn, err
}

func (t *Topology) receivedBehind(ctx context.Context, a, b *Node) (int64, error) {
	la, err := t.receivedLSN(ctx, a)
	if err != nil {
		return 0, err
	}
	lb, err := t.receivedLSN(ctx, b)
	if err != nil {
		return 0, err
	}
	return lsnDiff(lb, la), nil
}

// waitReplayedPast waits until n has replayed the WAL record that begins at lsn (a
// checkpoint's location, from pg_controldata): its replay position, the end of the last
// record replayed, is then beyond lsn.
func (t *Topology) waitReplayedPast(ctx context.Context, n *Node, lsn string, timeout time.Duration) error {
	return t.waitReplay(ctx, n, lsn, true, timeout)
}

// waitReplayedTo waits until n has replayed every record that ends at or before lsn (a
// primary's pg_current_wal_lsn(), the end of the last record it wrote): its replay position
// is then lsn or beyond. Waiting for it to pass lsn instead waits for a record the primary
// has not written: on an idle primary, until the background writer's next running-xacts
// record (up to 15 s after the last write), or for good when that record itself was the
// last one before lsn was read (no further WAL until the next checkpoint).
func (t *Topology) waitReplayedTo(ctx context.Context, n *Node, lsn string, timeout time.Duration) error {
	return t.waitReplay(ctx, n, lsn, false, timeout)
}

func (t *Topology) waitReplay(ctx context.Context, n *Node, lsn string, past bool, timeout time.Duration) error {
	c, err := t.Connect(ctx, n)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	q, words := `SELECT coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false)`, "up to"
	if past {
		q, words = `SELECT coalesce(pg_last_wal_replay_lsn() > $1::pg_lsn, false)`, "past"
	}
	deadline := time.Now().Add(timeout)
	for {
		var done bool
		if err := c.QueryRow(ctx, q, lsn).Scan(&done); err != nil {
			return err
		}
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			var at string
			if err := c.QueryRow(ctx, `SELECT coalesce(pg_last_wal_replay_lsn()::text, 'none')`).Scan(&at); err != nil {
				at = err.Error()
			}
			return fmt.Errorf("%s did not replay %s %s within %v (replayed %s)", n.Name, words, lsn, timeout, at)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (t *Topology) waitWritable(ctx context.Context, n *Node) error {
	deadline := time.Now().Add(promoteTimeout)
	for {
		c, err := t.Connect(ctx, n)
		if err == nil {
			var rec bool
			err = c.QueryRow(ctx, `SELECT pg_is_in_recovery()`).Scan(&rec)
			c.Close(context.WithoutCancel(ctx))
			if err == nil && !rec {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s still not writable %v after promote: %v", n.Name, promoteTimeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (t *Topology) reload(ctx context.Context, n *Node) error {
	return t.execOn(ctx, n, "SELECT pg_reload_conf()")
}

func (t *Topology) execOn(ctx context.Context, n *Node, sql string) error {
	c, err := t.Connect(ctx, n)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	_, err = c.Exec(ctx, sql)
	return err
}

// repoint makes a running standby stream from the new primary. If it cannot follow (it had
// WAL the new primary never saw), it is rewound.
func (t *Topology) repoint(ctx context.Context, s *Node) error {
	if !t.nodeRunning(s) {
		return t.writeConf(s) // it follows the new primary when next started
	}
	if err := t.writeConf(s); err != nil {
		return err
	}
	if err := t.reload(ctx, s); err != nil {
		return err
	}
	if err := t.waitStreaming(ctx, s.Name, 20*time.Second); err == nil {
		return nil
	}
	if err := t.stopNode(ctx, s, "fast"); err != nil {
		return err
	}
	if err := t.rewind(ctx, s); err != nil {
		return err
	}
	if err := t.startNode(ctx, s); err != nil {
		return err
	}
	return t.waitStreaming(ctx, s.Name, streamingTimeout)
}

// rejoin brings the old primary back as a standby of the new one, rewinding it first, and
// says in a word how that went.
func (t *Topology) rejoin(ctx context.Context, old *Node, r *FailoverReport) string {
	if t.nodeRunning(old) {
		if err := t.stopNode(ctx, old, "fast"); err != nil {
			r.Problems[old.Name] = err.Error()
			return "running, not rejoined"
		}
	}
	if err := t.rewind(ctx, old); err != nil {
		r.Problems[old.Name] = err.Error()
		return "stopped (rewind failed)"
	}
	r.Rewound = append(r.Rewound, old.Name)
	if err := t.writeConf(old); err != nil {
		r.Problems[old.Name] = err.Error()
		return "stopped"
	}
	if err := t.startNode(ctx, old); err != nil {
		r.Problems[old.Name] = err.Error()
		return "stopped (start failed)"
	}
	if err := t.waitStreaming(ctx, old.Name, streamingTimeout); err != nil {
		r.Problems[old.Name] = err.Error()
		return "running, not streaming"
	}
	return "streaming"
}

// rewind runs pg_rewind on a stopped node against the primary (a no-op when the node's WAL
// did not diverge), then rewrites agbench.conf, which pg_rewind copies from the source.
func (t *Topology) rewind(ctx context.Context, n *Node) error {
	p := t.Primary()
	src := fmt.Sprintf("host=%s port=%d user=%s dbname=%s passfile=%s sslmode=disable", p.Host, p.Port, t.Superuser, t.Database, quoteConnValue(t.PassFile))
	cmd := t.user().Command(ctx, t.PG.Path("pg_rewind"), "--target-pgdata", n.DataDir, "--source-server", src)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_rewind %s: %v: %s", n.Name, err, out)
	}
	return t.writeConf(n)
}
