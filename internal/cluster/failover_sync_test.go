package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// onLine calls f for each line written that contains sub (a failover's progress lines).
type onLine struct {
	sub string
	f   func() error
	err error
}

func (o *onLine) Write(b []byte) (int, error) {
	if strings.Contains(string(b), o.sub) && o.err == nil {
		o.err = o.f()
	}
	return len(b), nil
}

// With sync commit and one standby, the standby promoted after the primary's crash must not
// acknowledge a commit before it has a synchronous standby: the commit sent the moment it
// accepts writes (the failover's progress line, written before the old primary rejoins) waits
// for synchronous replication. Promoted without the primary's synchronous settings, it
// acknowledged such commits at once, held by one node only, and then blocked all commits
// until the old primary rejoined: "writes back" after 0.1 s, "writes blocked" 1-3 s.
func TestPromotedStandbyAcknowledgesNoCommitWithoutSynchronousStandby(t *testing.T) {
	t.Parallel() // owns its cluster: it fails over
	topo := clustertest.New(t, clustertest.Options{Standbys: 1, Commit: cluster.CommitSync})
	ctx := context.Background()
	exec1(t, connect(t, topo, topo.Primary()), `CREATE TABLE t (id int)`)
	if err := topo.WaitCaughtUp(ctx, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := topo.CrashNode(ctx, "primary"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	probe := func() error {
		to := topo.Node("standby1")
		c, err := topo.Connect(ctx, to)
		if err != nil {
			return err
		}
		pid := c.PgConn().PID()
		go func() {
			_, err := c.Exec(ctx, `INSERT INTO t VALUES (1)`)
			done <- err
			c.Close(context.Background())
		}()
		mon, err := topo.Connect(ctx, to)
		if err != nil {
			return err
		}
		defer mon.Close(ctx)
		for {
			select {
			case err := <-done:
				return fmt.Errorf("the new primary answered a commit (err %v) with no synchronous standby streaming", err)
			default:
			}
			var ev string
			if err := mon.QueryRow(ctx, `SELECT coalesce(wait_event, '') FROM pg_stat_activity WHERE pid = $1`, pid).Scan(&ev); err != nil {
				return err
			}
			if ev == "SyncRep" { // waiting, as it must; let the failover go on
				_, err := mon.Exec(ctx, `SELECT pg_cancel_backend($1)`, pid)
				return err
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	w := &onLine{sub: "(accepts writes)", f: probe}
	rep, err := topo.Failover(ctx, cluster.FailoverOptions{Progress: w})
	if err != nil {
		t.Fatal(err)
	}
	if w.err != nil {
		t.Fatal(w.err)
	}
	if rep.To != "standby1" || rep.OldPrimary != "streaming" || rep.RejoinedAt.Before(rep.PromotedAt) {
		t.Fatalf("failover to %s, old primary %s, rejoined %v, promoted %v: %v", rep.To, rep.OldPrimary, rep.RejoinedAt, rep.PromotedAt, rep.Problems)
	}
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Logf("the cancelled commit: %v", err) // cancelled in its wait: committed locally, with a warning
	}
}
