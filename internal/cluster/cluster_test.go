package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

func connect(t *testing.T, topo *cluster.Topology, n *cluster.Node) *pgx.Conn {
	t.Helper()
	c, err := topo.Connect(context.Background(), n)
	if err != nil {
		t.Fatalf("connect %s: %v", n.Name, err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// connectTo opens a session to database db on node n as the cluster's superuser.
func connectTo(t *testing.T, topo *cluster.Topology, n *cluster.Node, db string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), topo.ConnString(n, db))
	if err != nil {
		t.Fatalf("connect %s: %v", n.Name, err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func exec1(t *testing.T, c *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := c.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// eventually retries f until it returns nil or the time is up.
func eventually(t *testing.T, d time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestRowWrittenOnPrimaryReadableOnEveryStandby(t *testing.T) {
	t.Parallel()
	topo := clustertest.Shared(t, clustertest.Options{Standbys: 2})
	db := clustertest.OwnDatabase(t, topo)
	ctx := context.Background()
	p := connectTo(t, topo, topo.Primary(), db)
	exec1(t, p, `CREATE TABLE t (id int primary key, note text); INSERT INTO t VALUES (1, 'hello')`)
	if len(topo.Standbys()) != 2 {
		t.Fatalf("standbys: %v", topo.NodeNames())
	}
	for _, s := range topo.Standbys() {
		c := connectTo(t, topo, s, db)
		var note, name string
		var inRecovery bool
		eventually(t, 30*time.Second, func() error {
			return c.QueryRow(ctx, `SELECT note, pg_is_in_recovery(), current_setting('cluster_name') FROM t WHERE id = 1`).Scan(&note, &inRecovery, &name)
		})
		if note != "hello" || !inRecovery || name != s.Name {
			t.Fatalf("%s: note %q in recovery %v cluster_name %q", s.Name, note, inRecovery, name)
		}
	}
	// Each standby streams under its own name through its own slot.
	rows, err := p.Query(ctx, `SELECT r.application_name, s.slot_name FROM pg_stat_replication r JOIN pg_replication_slots s ON s.active_pid = r.pid ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var a, s string
		err := r.Scan(&a, &s)
		return a + "/" + s, err
	})
	if err != nil || strings.Join(got, ",") != "standby1/standby1,standby2/standby2" {
		t.Fatalf("replication: %v %v", got, err)
	}
}

func TestSyncCommitWaitsForAStandby(t *testing.T) {
	t.Parallel() // owns its cluster: it stops its standbys
	topo := clustertest.New(t, clustertest.Options{Standbys: 2, Commit: cluster.CommitSync})
	ctx := context.Background()
	p := connect(t, topo, topo.Primary())
	var ssn string
	if err := p.QueryRow(ctx, `SHOW synchronous_standby_names`).Scan(&ssn); err != nil || ssn != `ANY 1 ("standby1", "standby2")` {
		t.Fatalf("synchronous_standby_names %q %v", ssn, err)
	}
	exec1(t, p, `CREATE TABLE t (id int)`)
	for _, s := range topo.Standbys() {
		if err := topo.StopNode(ctx, s.Name); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := p.Exec(ctx, `INSERT INTO t VALUES (1)`)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("commit returned (%v) with both standbys down", err)
	case <-time.After(2 * time.Second):
	}
	if err := topo.StartNode(ctx, "standby2"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("commit still waiting 60 s after a standby came back")
	}
}

func TestStatusShowsLagGrowWhenReplayPausedAndShrinkWhenResumed(t *testing.T) {
	t.Parallel() // owns its cluster: it pauses the standby's replay
	topo := clustertest.New(t, clustertest.Options{Standbys: 1})
	ctx := context.Background()
	p := connect(t, topo, topo.Primary())
	s := connect(t, topo, topo.Standbys()[0])
	exec1(t, p, `CREATE TABLE t (id int, pad text)`)
	replayLag := func() int64 {
		st := topo.Status(ctx)
		for _, n := range st.Nodes {
			if n.Role == cluster.RoleStandby && n.ReplayLagBytes != nil {
				return *n.ReplayLagBytes
			}
		}
		t.Fatalf("no replay lag in status: %+v", st.Nodes)
		return 0
	}
	// Right after create the standby has sent no feedback yet; status still shows its lag.
	if st := topo.Status(ctx); st.Nodes[1].ReplayLagBytes == nil {
		t.Fatalf("status shows no replay lag for a streaming standby: %+v", st.Nodes[1])
	}
	eventually(t, 30*time.Second, func() error {
		if l := replayLag(); l != 0 {
			return fmt.Errorf("lag %d before pausing", l)
		}
		return nil
	})
	exec1(t, s, `SELECT pg_wal_replay_pause()`)
	exec1(t, p, `INSERT INTO t SELECT g, repeat('x', 100) FROM generate_series(1, 20000) g`)
	eventually(t, 30*time.Second, func() error {
		if l := replayLag(); l < 1<<20 {
			return fmt.Errorf("replay lag %d bytes after 2 MB of WAL with replay paused", l)
		}
		return nil
	})
	st := topo.Status(ctx)
	if !st.Nodes[1].ReplayPaused {
		t.Fatalf("status does not say replay is paused: %+v", st.Nodes[1])
	}
	exec1(t, s, `SELECT pg_wal_replay_resume()`)
	eventually(t, 30*time.Second, func() error {
		if l := replayLag(); l != 0 {
			return fmt.Errorf("replay lag %d after resume", l)
		}
		return nil
	})
}

func TestFailoverUnderCommittedWritesLosesNone(t *testing.T) {
	t.Parallel() // owns its cluster: it fails over
	topo := clustertest.New(t, clustertest.Options{Standbys: 2, Commit: cluster.CommitSync})
	ctx := context.Background()
	p := connect(t, topo, topo.Primary())
	exec1(t, p, `CREATE TABLE w (id bigint primary key)`)

	// Writers commit rows on the primary until it goes away; every acknowledged commit counts.
	var acked atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	writing := make(chan struct{}, 2) // a writer's first commit was acknowledged
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c, err := topo.Connect(ctx, topo.Primary())
			if err != nil {
				t.Error(err)
				writing <- struct{}{}
				return
			}
			defer c.Close(context.Background())
			for i := int64(0); ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := c.Exec(ctx, `INSERT INTO w VALUES ($1)`, int64(w)<<40|i); err != nil {
					if i == 0 {
						t.Errorf("writer %d: first commit: %v", w, err)
						writing <- struct{}{}
					}
					return
				}
				acked.Add(1)
				if i == 0 {
					writing <- struct{}{}
				}
			}
		}(w)
	}
	// The failover starts once both writers commit (after a fixed 700 ms, a writer slow to
	// connect on a busy machine could find the primary gone, and none be acknowledged).
	for range 2 {
		<-writing
	}
	rep, err := topo.Failover(ctx, cluster.FailoverOptions{})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("failover %s -> %s: writes back after %v, total %v, steps %+v", rep.From, rep.To, rep.WriteOutage, rep.Total, rep.Steps)
	if !rep.Planned || rep.OldPrimary != "streaming" || len(rep.Repointed) != 1 {
		t.Fatalf("report %+v", rep)
	}
	loaded, err := cluster.LoadFile(topo.Dir + "/topology.json")
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Primary().Name != rep.To || loaded.Node("primary").Role != cluster.RoleStandby || len(loaded.Failovers) != 1 {
		t.Fatalf("topology did not follow: primary %s, nodes %+v", loaded.Primary().Name, loaded.Nodes)
	}
	np := connect(t, loaded, loaded.Primary())
	var n int64
	if err := np.QueryRow(ctx, `SELECT count(*) FROM w`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n < acked.Load() || acked.Load() == 0 {
		t.Fatalf("new primary has %d rows, %d commits were acknowledged", n, acked.Load())
	}
	t.Logf("%d acknowledged commits, %d rows on the new primary", acked.Load(), n)
	// The new primary takes writes, and every other node (the old primary too) replays them.
	exec1(t, np, `INSERT INTO w VALUES (-1)`)
	for _, s := range loaded.Standbys() {
		c := connect(t, loaded, s)
		eventually(t, 30*time.Second, func() error {
			var one int
			return c.QueryRow(ctx, `SELECT 1 FROM w WHERE id = -1`).Scan(&one)
		})
	}
	// A second failover goes back.
	if _, err := loaded.Failover(ctx, cluster.FailoverOptions{To: "primary"}); err != nil {
		t.Fatal(err)
	}
	if loaded.Primary().Name != "primary" {
		t.Fatalf("primary is %s", loaded.Primary().Name)
	}
}

func TestFailoverWithPrimaryDownPromotesMostAdvanced(t *testing.T) {
	t.Parallel() // owns its cluster: it fails over
	topo := clustertest.New(t, clustertest.Options{Standbys: 2})
	ctx := context.Background()
	p := connect(t, topo, topo.Primary())
	exec1(t, p, `CREATE TABLE t (id int); INSERT INTO t VALUES (1)`)
	if err := topo.WaitCaughtUp(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := topo.StopNodeMode(ctx, "primary", "immediate"); err != nil {
		t.Fatal(err)
	}
	rep, err := topo.Failover(ctx, cluster.FailoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Planned {
		t.Fatal("a failover with the primary down is not planned")
	}
	t.Logf("unplanned failover to %s: writes back after %v; old primary %s; problems %v", rep.To, rep.WriteOutage, rep.OldPrimary, rep.Problems)
	c := connect(t, topo, topo.Primary())
	exec1(t, c, `INSERT INTO t VALUES (2)`)
	if rep.OldPrimary != "streaming" {
		t.Fatalf("old primary: %s (%v)", rep.OldPrimary, rep.Problems)
	}
}

func TestDestroyLeavesNoProcessAndNoFiles(t *testing.T) {
	t.Parallel() // owns its cluster: it destroys it
	clustertest.Require(t)
	home := clustertest.Home(t)
	topo := clustertest.NewIn(t, home, clustertest.Options{Standbys: 1})
	var pids []string
	for _, n := range topo.Nodes {
		b, err := os.ReadFile(n.DataDir + "/postmaster.pid")
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, strings.SplitN(string(b), "\n", 2)[0])
	}
	if err := topo.Destroy(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(topo.Dir); !os.IsNotExist(err) {
		t.Fatalf("%s still there: %v", topo.Dir, err)
	}
	for _, pid := range pids {
		if n, _ := strconv.Atoi(pid); cluster.Alive(n) {
			out, _ := exec.Command("ps", "-p", pid, "-o", "args=").Output()
			t.Fatalf("postmaster %s still running: %s", pid, out)
		}
	}
	names, err := cluster.List(home)
	if err != nil || len(names) != 0 {
		t.Fatalf("list after destroy: %v %v", names, err)
	}
}

func TestCreateInterruptedLeavesNothing(t *testing.T) {
	t.Parallel() // owns its cluster: it interrupts its creation
	clustertest.Require(t)
	home := clustertest.Home(t)
	for _, after := range []time.Duration{300 * time.Millisecond, 800 * time.Millisecond, 1500 * time.Millisecond, 2500 * time.Millisecond, 4 * time.Second} {
		base, err := clustertest.FreePorts(3)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), after)
		_, err = cluster.Create(ctx, cluster.CreateOptions{Home: home, Name: "cut", Standbys: 2, Commit: cluster.CommitAsync, BasePort: base})
		cancel()
		if err == nil {
			t.Logf("create finished within %v; destroying", after)
			topo, _ := cluster.Load(home, "cut")
			topo.Destroy(context.Background())
			continue
		}
		if _, serr := os.Stat(cluster.ClusterDir(home, "cut")); !os.IsNotExist(serr) {
			t.Fatalf("interrupted after %v (%v): cluster folder left behind", after, err)
		}
		for p := base; p < base+3; p++ {
			if err := clustertest.PortFree(p); err != nil {
				t.Fatalf("interrupted after %v: %v", after, err)
			}
		}
	}
}

func TestCreateRefusesPortInUseAndMakesNothing(t *testing.T) {
	t.Parallel() // owns its cluster: it creates a second on its ports
	clustertest.Require(t)
	home := clustertest.Home(t)
	topo := clustertest.NewIn(t, home, clustertest.Options{Name: "first"})
	_, err := cluster.Create(context.Background(), cluster.CreateOptions{Home: home, Name: "second", Standbys: 1,
		Commit: cluster.CommitAsync, BasePort: topo.Primary().Port})
	if err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("want a port-in-use error, got %v", err)
	}
	if _, serr := os.Stat(cluster.ClusterDir(home, "second")); !os.IsNotExist(serr) {
		t.Fatal("a refused create left a folder")
	}
}

func TestLockIsExclusive(t *testing.T) {
	dir := t.TempDir()
	topo := &cluster.Topology{Name: "x", Dir: dir}
	unlock, err := topo.Lock()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := topo.Lock(); !errors.Is(err, cluster.ErrBusy) {
		t.Fatalf("second lock: %v, want ErrBusy", err)
	}
	unlock()
	unlock2, err := topo.Lock()
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	unlock2()
}

// A child forked while the lock is held keeps a copy of its descriptor until it execs; the
// unlock must release the cluster all the same, or the process's next Lock finds it busy
// (seen as "cluster is busy" in tests beside others that start processes). The copy is
// made here as the fork makes it, by duplicating the descriptor.
func TestUnlockReleasesWhileAForkHoldsTheLockFile(t *testing.T) {
	dir := t.TempDir()
	topo := &cluster.Topology{Name: "x", Dir: dir}
	unlock, err := topo.Lock()
	if err != nil {
		t.Fatal(err)
	}
	lockFile := filepath.Join(dir, ".lock")
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	copied := -1
	for _, e := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == lockFile {
			fd, _ := strconv.Atoi(e.Name())
			if copied, err = syscall.Dup(fd); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if copied < 0 {
		t.Fatalf("no descriptor of %s open while locked", lockFile)
	}
	defer syscall.Close(copied)
	unlock()
	unlock2, err := topo.Lock()
	if err != nil {
		t.Fatalf("after unlock, with a copy of the descriptor still open: %v", err)
	}
	unlock2()
}
