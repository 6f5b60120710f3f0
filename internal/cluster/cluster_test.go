package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

func TestRowWrittenOnPrimaryReadableOnEveryStandby(t *testing.T) {
	topo := clustertest.New(t, clustertest.Options{Standbys: 2})
	ctx := context.Background()
	p, err := topo.Connect(ctx, topo.Primary())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	if _, err := p.Exec(ctx, `CREATE TABLE t (id int primary key, note text); INSERT INTO t VALUES (1, 'hello')`); err != nil {
		t.Fatal(err)
	}
	for _, s := range topo.Standbys() {
		c, err := topo.Connect(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		var note string
		var inRecovery bool
		deadline := time.Now().Add(30 * time.Second)
		for {
			err = c.QueryRow(ctx, `SELECT note, pg_is_in_recovery() FROM t WHERE id = 1`).Scan(&note, &inRecovery)
			if err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		c.Close(ctx)
		if err != nil || note != "hello" || !inRecovery {
			t.Fatalf("%s: note %q in recovery %v err %v", s.Name, note, inRecovery, err)
		}
	}
	fmt.Println(topo.Name, "ok")
	_ = cluster.RolePrimary
}
