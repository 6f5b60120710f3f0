package sample

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
)

// A primary and a standby under a small write load, one session holding a table lock in an
// open transaction and another blocked behind it: the sampler must see commits, WAL, the
// standby's replay, a checkpoint, the lock wait and the idle transaction, and never itself.
func TestPGSamplerOnCluster(t *testing.T) {
	t.Parallel() // owns its cluster: it judges cluster-wide checkpoints and lock waits
	clustertest.Require(t)
	checkPGSampler(t)
}

// On PostgreSQL 18 (when scripts/get-pg18.sh fetched it): pg_stat_io with byte columns,
// and checkpoints from pg_stat_checkpointer.
func TestPGSamplerOnPG18(t *testing.T) {
	clustertest.Require(t)
	bin := os.Getenv("AGBENCH_PG18_BIN")
	if bin == "" {
		bin = "/var/cache/agbench/pg18/bin"
	}
	if _, err := os.Stat(filepath.Join(bin, "postgres")); err != nil {
		t.Skipf("no PostgreSQL 18 at %s (run scripts/get-pg18.sh)", bin)
	}
	t.Setenv("AGBENCH_PG_BIN", bin)
	checkPGSampler(t)
}

func checkPGSampler(t *testing.T) {
	topo := clustertest.New(t, clustertest.Options{Standbys: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	prim, stby := topo.Primary(), topo.Standbys()[0]
	connect := func() *pgx.Conn {
		c, err := pgx.Connect(ctx, topo.ConnString(prim, ""))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	setup := connect()
	for _, q := range []string{"CREATE TABLE w (id bigserial PRIMARY KEY, v text)", "CREATE TABLE locked (id int)"} {
		if _, err := setup.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}

	// The standby is named otherwise than its WAL receiver's application_name: the
	// primary's figures of it take the sampler's name (one name per node).
	sname := "other-" + stby.Name
	p, err := NewPG(ctx, []PGNode{{prim.Name, topo.ConnString(prim, "")}, {sname, topo.ConnString(stby, "")}}, PGOptions{Interval: 250 * time.Millisecond, WaitInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	infos := p.Nodes()
	if infos[0].InRecovery || !infos[1].InRecovery || infos[0].VersionNum < 130000 || infos[0].SharedBuffersBytes <= 0 || infos[0].DatabaseBytes <= 0 {
		t.Fatalf("node info: %+v", infos)
	}
	if infos[0].HasStatIO != (infos[0].VersionNum >= 160000) {
		t.Errorf("pg_stat_io detection: %+v", infos[0])
	}

	holder, waiter := connect(), connect()
	if _, err := holder.Exec(ctx, "BEGIN; LOCK TABLE locked IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	blocked := make(chan error, 1)
	go func() { _, err := waiter.Exec(ctx, "SELECT count(*) FROM locked"); blocked <- err }()
	waitFor(t, ctx, setup, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")

	// The checkpointer reports a checkpoint's statistics (pg_stat_bgwriter, pg_stat_io)
	// after it has told CHECKPOINT that the checkpoint is done: the window stays open until
	// they show (under load they came after the window's end).
	ckpt := checkpointsQuery16
	if infos[0].VersionNum >= 170000 {
		ckpt = checkpointsQuery17
	}
	checkpointed := func() (checkpoints, ioWrites int64) {
		t.Helper()
		var buffers int64
		if err := setup.QueryRow(ctx, ckpt).Scan(&checkpoints, &buffers); err != nil {
			t.Fatal(err)
		}
		if infos[0].HasStatIO {
			if err := setup.QueryRow(ctx, "SELECT coalesce(sum(writes), 0)::bigint FROM pg_stat_io").Scan(&ioWrites); err != nil {
				t.Fatal(err)
			}
		}
		return checkpoints, ioWrites
	}
	ckpt0, io0 := checkpointed()

	st := &result.Step{Window: result.Window{Start: time.Now()}}
	if err := p.Start(ctx, st); err != nil {
		t.Fatal(err)
	}
	load, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		c := connect()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for load.Err() == nil {
				c.Exec(load, "INSERT INTO w (v) SELECT repeat('x', 200) FROM generate_series(1, 20)")
			}
		}()
	}
	// The load seen by several readings, the lock wait by many.
	readings(t, ctx, p, 4, 20)
	if _, err := setup.Exec(ctx, "CHECKPOINT"); err != nil {
		t.Fatal(err)
	}
	for {
		n, w := checkpointed()
		if n > ckpt0 && (!infos[0].HasStatIO || w > io0) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the checkpoint's statistics never showed: %d checkpoints (%d before), %d writes (%d before)", n, ckpt0, w, io0)
		}
		time.Sleep(20 * time.Millisecond)
	}
	readings(t, ctx, p, 2, 0) // the second one began after the checkpoint's statistics showed
	stop()
	wg.Wait()
	st.Window.End = time.Now()
	if err := p.Stop(ctx, st); err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if err := <-blocked; err != nil {
		t.Fatal(err)
	}

	pre, spre := "pg."+prim.Name+".", "pg."+sname+"."
	c := st.Counters
	for _, k := range []string{pre + "commits_per_s", pre + "wal_mb_per_s", pre + "checkpoints", spre + "replay_mb_per_s",
		pre + "standby." + sname + ".replay_mb_per_s"} {
		if c[k] <= 0 {
			t.Errorf("counter %s = %v, want > 0", k, c[k])
		}
	}
	// One session blocked on the lock, one idle in its transaction, the whole window long
	// (the inserters may add relation-extension lock waits of their own).
	if v := c[pre+"wait.lock"]; v < 0.8 {
		t.Errorf("mean sessions in lock waits = %v, want at least 1", v)
	}
	if v := c[pre+"wait.client"]; v < 0.8 {
		t.Errorf("mean sessions idle in transaction = %v, want at least 1", v)
	}
	if v := c[spre+"wait.cpu"] + c[spre+"wait.other"]; v != 0 {
		t.Errorf("the standby had no client sessions but shows %v (the sampler counted itself?)", v)
	}
	if infos[0].HasStatIO {
		for _, k := range []string{pre + "io_writes_per_s", pre + "io_write_mb_per_s"} {
			if c[k] <= 0 {
				t.Errorf("pg_stat_io counter %s = %v, want > 0 (a checkpoint ran)", k, c[k])
			}
		}
	}
	for _, k := range []string{pre + "commits_per_s", pre + "wait.lock", pre + "standby." + sname + ".replay_lag_s"} {
		s, ok := st.Series[k]
		if !ok || len(s.V) < 3 {
			t.Errorf("series %s has %d points, want several", k, len(s.V))
		}
	}
	ex, err := st.Sample()
	if err != nil || ex == nil {
		t.Fatalf("sample section %v: %v", ex, err)
	}
	top := ex.Nodes[prim.Name].TopWaits
	found := false
	for _, w := range top {
		found = found || w.Type == "Lock" && w.Event == "relation" && w.Class == WaitLock && w.Sessions > 0.8 && w.Sessions < 1.2
	}
	if !found || ex.Nodes[prim.Name].WaitSamples < 10 {
		t.Errorf("top waits %+v (%d samples) lack the lock wait", top, ex.Nodes[prim.Name].WaitSamples)
	}

	// A second window on the same connections starts afresh, and keeps its figures when cut short.
	st2 := &result.Step{Window: result.Window{Start: time.Now()}}
	if err := p.Start(ctx, st2); err != nil {
		t.Fatal(err)
	}
	readings(t, ctx, p, 1, 1)
	cut, cutCancel := context.WithCancel(ctx)
	cutCancel() // Ctrl-C: the step is cut short, its last reading is still taken
	if err := p.Stop(cut, st2); err != nil {
		t.Fatal(err)
	}
	if _, ok := st2.Counters[pre+"commits_per_s"]; !ok {
		t.Errorf("interrupted window lost its figures: %v", st2.Counters)
	}
	if v := st2.Counters[pre+"wait.lock"]; v != 0 {
		t.Errorf("second window still sees the released lock: %v", v)
	}
}

func TestPGSamplerBadConnString(t *testing.T) {
	clustertest.Require(t)
	ctx := context.Background()
	_, err := NewPG(ctx, []PGNode{{"x", "host=127.0.0.1 port=1 connect_timeout=2 sslmode=disable"}}, PGOptions{})
	if err == nil {
		t.Fatal("connected to nothing")
	}
}

// until waits, polling, until cond holds, or fails the test when ctx ends first.
func until(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// readings waits until p's window has taken stats readings of the statistics and waits
// of the wait events beyond what it had taken when called.
func readings(t *testing.T, ctx context.Context, p *PG, stats, waits int) {
	t.Helper()
	s0, w0 := p.Readings()
	until(t, ctx, fmt.Sprintf("%d readings of the statistics and %d of the waits", stats, waits), func() bool {
		s, w := p.Readings()
		return s >= s0+stats && w >= w0+waits
	})
}

func waitFor(t *testing.T, ctx context.Context, c *pgx.Conn, countQuery string) {
	t.Helper()
	waitUntil(t, ctx, c, "SELECT ("+countQuery+") > 0")
}
