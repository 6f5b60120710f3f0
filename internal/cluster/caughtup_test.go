package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// A standby that replayed exactly up to a position has caught up with it: WaitCaughtUp reads
// the primary's pg_current_wal_lsn(), the end of the last record written, and the standby's
// replay position is the end of the last record replayed, so the two are equal when the
// standby is caught up and nothing more is written. Waiting for the replay to pass the
// position waited for the next record: 7-20 s on an idle primary (the background writer's
// running-xacts record), and for ever when that record was the last before the position was
// read ("standby1 did not replay past 0/CBED7F8 within 1m0s" before a Patroni drill). Replay
// is paused here, so that no record can come after the position.
func TestCaughtUpAtTheSamePosition(t *testing.T) {
	t.Parallel() // owns its cluster: it pauses the standby's replay
	topo := clustertest.New(t, clustertest.Options{Standbys: 1})
	ctx := context.Background()
	exec1(t, connect(t, topo, topo.Primary()), `CREATE TABLE t (id int); INSERT INTO t VALUES (1)`)
	if err := topo.WaitCaughtUp(ctx, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	s := connect(t, topo, topo.Node("standby1"))
	exec1(t, s, `SELECT pg_wal_replay_pause()`)
	var lsn string
	eventually(t, 30*time.Second, func() error {
		var state string
		if err := s.QueryRow(ctx, `SELECT pg_get_wal_replay_pause_state(), pg_last_wal_replay_lsn()::text`).Scan(&state, &lsn); err != nil {
			return err
		}
		if state != "paused" {
			return fmt.Errorf("replay pause state %s", state)
		}
		return nil
	})
	if err := cluster.WaitReplayedTo(topo, ctx, topo.Node("standby1"), lsn, 5*time.Second); err != nil {
		t.Fatalf("a standby that replayed up to %s: %v", lsn, err)
	}
	// One byte further is not replayed while replay is paused.
	var next string
	if err := s.QueryRow(ctx, `SELECT ($1::pg_lsn + 1)::text`, lsn).Scan(&next); err != nil {
		t.Fatal(err)
	}
	err := cluster.WaitReplayedTo(topo, ctx, topo.Node("standby1"), next, 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "did not replay up to "+next) || !strings.Contains(err.Error(), "replayed "+lsn) {
		t.Fatalf("waiting for %s with replay paused at %s: %v", next, lsn, err)
	}
	exec1(t, s, `SELECT pg_wal_replay_resume()`)
}
