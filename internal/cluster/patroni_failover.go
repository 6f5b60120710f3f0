package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/agbench/agbench/internal/agerr"
)

// patroniFailover is `cluster failover` under Patroni: agbench asks the leader's Patroni for
// a switchover (POST /switchover) and Patroni does the rest — it demotes the leader, promotes
// the candidate and brings the old leader back as a replica. agbench waits and times it.
func (t *Topology) patroniFailover(ctx context.Context, o FailoverOptions) (*FailoverReport, error) {
	if o.Force {
		return nil, agerr.BadInputf("--force: under Patroni a switchover goes only to a standby Patroni finds healthy; Patroni itself fails over when the primary is lost")
	}
	ctx = context.WithoutCancel(ctx)
	if _, err := t.FollowPatroni(ctx); err != nil {
		return nil, err
	}
	old := t.Primary()
	if _, err := t.OwnPatroni(old.Name); err != nil {
		return nil, fmt.Errorf("no switchover: %w (Patroni fails over by itself when its leader is lost)", err)
	}
	start := time.Now()
	r := &FailoverReport{From: old.Name, Planned: true, Problems: map[string]string{}}
	clock := &stepClock{r: r, last: start, w: o.Progress}
	msg, err := t.PatroniSwitchover(ctx, o.To)
	if err != nil {
		return nil, err
	}
	clock.done("POST /switchover: " + msg)
	to, err := t.WaitPatroniPromoted(ctx, old.Name, promoteTimeout)
	if err != nil {
		return nil, err
	}
	r.To = to.Name
	if err := t.waitWritable(ctx, to); err != nil {
		return nil, err
	}
	r.WriteOutage = time.Since(start)
	clock.done("Patroni promoted " + to.Name + " (accepts writes)")
	if _, err := t.FollowPatroni(ctx); err != nil {
		return nil, err
	}
	r.OldPrimary = "streaming"
	if err := t.WaitPatroniWhole(ctx); err != nil {
		r.OldPrimary, r.Problems[old.Name] = "not streaming", err.Error()
	}
	clock.done("Patroni brought " + old.Name + " back as a standby")
	r.Total = time.Since(start)
	t.Failovers = append(t.Failovers, FailoverRecord{At: start.UTC(), From: r.From, To: r.To, Planned: true,
		WriteOutage: r.WriteOutage.Seconds(), Total: r.Total.Seconds()})
	if len(r.Problems) == 0 {
		r.Problems = nil
	}
	return r, t.Save()
}

// WaitPatroniPromoted waits until a node other than old runs as Patroni's primary (its own
// REST API says so) and returns it.
func (t *Topology) WaitPatroniPromoted(ctx context.Context, old string, timeout time.Duration) (*Node, error) {
	deadline := time.Now().Add(timeout)
	for {
		for i := range t.Nodes {
			n := &t.Nodes[i]
			if n.Name == old {
				continue
			}
			if s, err := PatroniStateAt(ctx, n.RESTURL()); err == nil && s.IsPrimary() {
				return n, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("Patroni promoted no node other than %s within %v", old, timeout)
		}
		if err := sleepCtx(ctx, 20*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// WaitPatroniWhole waits until Patroni has a running leader, every member streams from it
// (the primary's pg_stat_replication says so) and, in synchronous mode, one is its
// synchronous standby; the topology's roles follow Patroni's.
func (t *Topology) WaitPatroniWhole(ctx context.Context) error {
	if err := t.waitPatroniWhole(ctx, PatroniWholeTimeout); err != nil {
		return err
	}
	for _, s := range t.Standbys() {
		if err := t.waitStreaming(ctx, s.Name, streamingTimeout); err != nil {
			return err
		}
	}
	return nil
}
