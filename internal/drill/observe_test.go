package drill

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/listener"
	"github.com/agbench/agbench/internal/render"
	"github.com/agbench/agbench/internal/result"
)

func observe(t *testing.T, e *Endpoints, o Options) (*result.DrillRun, *result.Result, error) {
	t.Helper()
	return observeLog(t, e, o, t.Logf)
}

func observeLog(t *testing.T, e *Endpoints, o Options, p Progress) (*result.DrillRun, *result.Result, error) {
	t.Helper()
	o.Fault = FaultObserve
	if o.Cycles == 0 {
		o.Cycles = 1
	}
	if o.Writers == 0 {
		o.Writers, o.Readers = 2, 1
	}
	if o.Between == 0 {
		o.Between = 500 * time.Millisecond
	}
	if o.CommitWait == 0 {
		o.CommitWait = DefaultCommitWait
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	res := &result.Result{}
	run, err := RunObserve(context.Background(), e, o, res, &sink{res}, p)
	return run, res, err
}

// observeOwnFailover runs an observe drill on h while the test fails it over by its own
// means: a clean stop of the primary (node 0), then pg_ctl promote of node 1.
func observeOwnFailover(t *testing.T, h *clustertest.Handmade, e *Endpoints) (*result.DrillRun, *result.Result, error) {
	t.Helper()
	failedOver := make(chan error, 1)
	run, res, err := observe(t, e, Options{Hooks: &Hooks{BeforeFault: func(ctx context.Context, c *Cycle) error {
		go func() {
			if err := h.Stop(ctx, 0); err != nil {
				failedOver <- err
				return
			}
			failedOver <- h.Promote(ctx, 1)
		}()
		return nil
	}}})
	if ferr := <-failedOver; ferr != nil {
		t.Fatalf("the test's own failover: %v", ferr)
	}
	return run, res, err
}

// TestObserveHandmade runs --fault observe on a cluster built without agbench's cluster code
// (initdb, pg_basebackup, pg_ctl), through connection strings only: the test fails it over
// by its own means (a clean stop of the primary, pg_ctl promote) while the drill's load
// runs; the drill sees the fault and the promotion, finds every acknowledged commit on the
// new primary, and reports the old primary down (its return is not the drill's to check).
func TestObserveHandmade(t *testing.T) {
	t.Parallel() // owns its cluster: it fails over
	h := clustertest.NewHandmade(t, 1)
	e, err := NewEndpoints(h.URL(0, clustertest.HandmadeAdmin), []string{"new=" + h.URL(1, clustertest.HandmadeAdmin)}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	run, res, err := observeOwnFailover(t, h, e)
	if err != nil {
		t.Fatalf("drill: %v (%+v)", err, run)
	}
	t.Log(run.Verdict)
	dc := cycles(t, res)[0]
	if !dc.Checked || lostOf(dc) != 0 || dc.Acked == 0 || dc.To != "new" || dc.FailoverSeconds == nil || dc.WriteBackSeconds == nil {
		t.Fatalf("cycle %+v", dc)
	}
	if dc.OldPrimary != "down" || len(dc.Writable) != 1 || dc.Writable[0] != "new" {
		t.Fatalf("old primary %q, writable %v", dc.OldPrimary, dc.Writable)
	}
	if !strings.HasPrefix(run.Left, "not whole") || !strings.Contains(run.Left, "down") {
		t.Fatalf("left %q", run.Left)
	}
}

// Bad endpoints are refused at once, each named.
func TestNewEndpointsBadInput(t *testing.T) {
	_, err := NewEndpoints("host=127.0.0.1 port=1 user=a dbname=x", []string{"host=127.0.0.1 port=2 user=b dbname=x", "port=notaport"}, "", []string{"http://a:1"})
	for _, want := range []string{"user b", "--standby port=notaport", "--patroni: 1 URL(s) for 2 node(s)"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	if _, err := NewEndpoints("", nil, "", nil); err == nil || !strings.Contains(err.Error(), "--primary") || !strings.Contains(err.Error(), "--standby") {
		t.Errorf("no nodes: %v", err)
	}
}

// observeThroughURLs is an observe drill on a cluster under Patroni given only by
// connection strings and Patroni REST URLs: the drill asks Patroni for a switchover. Before
// it, the standby loses its synchronous status (its Patroni stopped for ttl, then resumed, as
// a Patroni just started again): the drill waits until Patroni's view is whole before it asks
// (in synchronous_mode Patroni refuses a switchover with no synchronous standby to take it),
// and its recorded timeline says so.
func observeThroughURLs(t *testing.T, topo *cluster.Topology) {
	var standbys, rest []string
	rest = append(rest, topo.Primary().RESTURL())
	for _, s := range topo.Standbys() {
		standbys = append(standbys, s.Name+"="+topo.URL(s, ""))
		rest = append(rest, s.RESTURL())
	}
	from := topo.Primary().Name
	e, err := NewEndpoints(topo.Primary().Name+"="+topo.URL(topo.Primary(), ""), standbys, "", rest)
	if err != nil {
		t.Fatal(err)
	}
	var waited []string
	progress := func(format string, a ...any) {
		line := fmt.Sprintf(format, a...)
		if strings.Contains(line, "not whole") {
			waited = append(waited, line)
		}
		t.Log(line)
	}
	hooks := &Hooks{BeforeFault: func(ctx context.Context, c *Cycle) error { return loseSyncStandby(ctx, t, topo) }}
	run, res, err := observeLog(t, e, Options{Hooks: hooks}, progress)
	if err != nil {
		t.Fatalf("drill: %v (%+v)", err, run)
	}
	dc := cycles(t, res)[0]
	whole := slices.IndexFunc(dc.Events, func(ev result.DrillEvent) bool { return ev.Event == result.EventWhole })
	fault := slices.IndexFunc(dc.Events, func(ev result.DrillEvent) bool { return ev.Event == result.EventFault })
	if len(waited) != 1 || whole < 0 || fault < whole || !strings.Contains(dc.Events[whole].Detail, "sync_standby") || dc.Events[fault].At.Before(dc.Events[whole].At) {
		t.Fatalf("the fault did not wait for a whole view: progress %q, events %+v", waited, dc.Events)
	}
	if !dc.Checked || lostOf(dc) != 0 || dc.Acked == 0 || dc.To == from || !strings.HasPrefix(dc.HAOutcome, "switchover") {
		t.Fatalf("cycle %+v", dc)
	}
	t.Log(run.Verdict, "; ", dc.HAOutcome)
	// The new primary's synchronous standbys, sampled: Patroni's synchronous_mode read from
	// its GET /config through the URLs names the cause of a span without one.
	g := dc.SyncGap
	if g == nil || (g.Note == "") == (g.NoSyncSeconds == nil) || g.NoSync() != nil && *g.NoSyncSeconds > 0 && g.Cause != "Patroni synchronous_mode without strict" {
		t.Fatalf("sync gap %+v", g)
	}
	t.Log(render.SyncGapSentence(g))
	// The drill does not wait for the old primary's return; the next test needs it back.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := topo.WaitPatroniWhole(ctx); err != nil {
		t.Fatal(err)
	}
}

// FuzzNewEndpoints: connection strings from the command line never panic the parser or the
// host lists made of what it accepts.
func FuzzNewEndpoints(f *testing.F) {
	f.Add("postgres://a:b@127.0.0.1:5432/db", "b=postgres://a:b@127.0.0.1:5433/db")
	f.Add("host=127.0.0.1 port=1 user=a dbname=x", "host=127.0.0.1 port=2 user=a dbname=x")
	f.Add("x=", "=postgres://")
	f.Fuzz(func(t *testing.T, primary, standby string) {
		e, err := NewEndpoints(primary, []string{standby}, "", nil)
		if err != nil {
			return
		}
		if len(e.Nodes) != 2 {
			t.Fatalf("accepted %d nodes", len(e.Nodes))
		}
		e.multiHost("read-write")
	})
}

// observe's login may lack pg_read_all_stats: pg_stat_replication then shows it the
// standbys' rows with sync_state NULL, which read as "no synchronous standby streaming"
// made every sample say commits waited. The sample is refused instead, saying why, and the
// new primary's synchronous standbys are absent; a login that may see them reads them.
func TestReadSyncStateHiddenFromAnUnprivilegedLogin(t *testing.T) {
	t.Parallel()
	topo := clustertest.Shared(t, clustertest.Options{Standbys: 1})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, c := range []struct {
		user   string
		conn   string
		hidden bool
	}{{clustertest.OrdinaryUser, clustertest.OrdinaryConnString(topo, topo.Primary()), true}, {topo.Superuser, topo.ConnString(topo.Primary(), ""), false}} {
		conn, err := pgx.Connect(ctx, c.conn)
		if err != nil {
			t.Fatal(err)
		}
		s, err := readSyncState(ctx, conn)
		conn.Close(context.Background())
		if hidden := errors.Is(err, errSyncHidden); hidden != c.hidden || (!c.hidden && err != nil) {
			t.Fatalf("%s: %+v, %v; want hidden %v", c.user, s, err, c.hidden)
		}
		if !c.hidden && (!s.primary || s.srv.port == 0 || s.srv.started.IsZero()) {
			t.Fatalf("%s: %+v", c.user, s)
		}
	}
}

// observe through a listener (--listener): the load's sessions reach the nodes through it,
// and the server each one landed on says its own port, not the listener's; the writes back
// on the new primary are found by that port.
func TestObserveHandmadeThroughAListener(t *testing.T) {
	t.Parallel() // owns its cluster: it fails over
	h := clustertest.NewHandmade(t, 1)
	l, err := listener.Start(context.Background(), listener.Config{Listen: "127.0.0.1:0", ProbeInterval: 100 * time.Millisecond,
		Backends: []listener.Backend{
			{Name: "old", Addr: fmt.Sprintf("127.0.0.1:%d", h.Ports[0]), ProbeConnString: h.ConnString(0, clustertest.HandmadeAdmin)},
			{Name: "new", Addr: fmt.Sprintf("127.0.0.1:%d", h.Ports[1]), ProbeConnString: h.ConnString(1, clustertest.HandmadeAdmin)}}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	via := fmt.Sprintf("postgres://%s:%s@%s/%s?sslmode=disable", clustertest.HandmadeAdmin, clustertest.HandmadeAdminPW, l.Addr(), clustertest.HandmadeDatabase)
	e, err := NewEndpoints("old="+h.URL(0, clustertest.HandmadeAdmin), []string{"new=" + h.URL(1, clustertest.HandmadeAdmin)}, via, nil)
	if err != nil {
		t.Fatal(err)
	}
	run, res, err := observeOwnFailover(t, h, e)
	if err != nil {
		t.Fatalf("drill: %v (%+v)", err, run)
	}
	dc := cycles(t, res)[0]
	if !dc.Checked || lostOf(dc) != 0 || dc.Acked == 0 || dc.To != "new" || dc.WriteBackSeconds == nil {
		t.Fatalf("through the listener: cycle %+v", dc)
	}
	if want := "its writes go through --listener"; !strings.Contains(dc.RerouteNote, want) {
		t.Errorf("reroute note %q: want why observe does not time it (%q), never that the cluster has no listener", dc.RerouteNote, want)
	}
	t.Log(run.Verdict)
}

// An ordinary login (no pg_read_all_stats or pg_monitor) reads pg_stat_wal_receiver's
// status as NULL: a streaming standby is judged from the WAL positions any login may read,
// and the state says which privilege would give the status; a standby without a WAL
// receiver is not streaming for either login.
func TestWholeAsAnOrdinaryLogin(t *testing.T) {
	t.Parallel() // owns its cluster: it stops a standby's WAL receiver
	h := clustertest.NewHandmade(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ends := map[string]*Endpoints{}
	for _, user := range []string{clustertest.HandmadeApp, clustertest.HandmadeAdmin} {
		e, err := NewEndpoints("p="+h.URL(0, user), []string{"s=" + h.URL(1, user)}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		ends[user] = e
		s := e.whole(ctx)
		t.Logf("%s: %s", user, s)
		if !strings.HasPrefix(s, "whole: primary p, streaming standbys s") {
			t.Fatalf("%s: %q, want whole", user, s)
		}
		if hidden := strings.Contains(s, "pg_read_all_stats"); hidden != (user == clustertest.HandmadeApp) {
			t.Fatalf("%s: %q: the privilege named %v", user, s, hidden)
		}
	}
	c := h.Admin(ctx, t, 1)
	defer c.Close(ctx)
	for _, q := range []string{"ALTER SYSTEM SET primary_conninfo = ''", "SELECT pg_reload_conf()"} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for {
		var n int
		if err := c.QueryRow(ctx, `SELECT count(*) FROM pg_stat_wal_receiver`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the WAL receiver did not stop")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for user, e := range ends {
		if s := e.whole(ctx); !strings.HasPrefix(s, "not whole: primary p; s: in recovery, not streaming") {
			t.Fatalf("%s: %q, want s not streaming", user, s)
		}
	}
}

// A failover by other means whose primary blocks writes before it stops answering (as a
// switchover's demotion does: Patroni checkpoints the old primary first; here the test
// holds a lock on the ledger for a second and a half, then stops the primary and promotes
// the standby) is timed from when writes first degraded, and says so; the moment the
// primary stopped answering is an event of its own.
func TestObserveTimesTheFaultFromDegradedWrites(t *testing.T) {
	t.Parallel() // owns its cluster: it fails over
	h := clustertest.NewHandmade(t, 1)
	e, err := NewEndpoints("old="+h.URL(0, clustertest.HandmadeApp), []string{"new=" + h.URL(1, clustertest.HandmadeApp)}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	const blocked = 1500 * time.Millisecond
	var asked, locked time.Time
	failedOver := make(chan error, 1)
	hooks := &Hooks{BeforeFault: func(ctx context.Context, c *Cycle) error {
		// The lock's session logs in and begins first: a login (SCRAM, under the race
		// detector on a busy machine) takes CPU from the load and can dip its writes just
		// before the lock, a dip no one could tell from the fault.
		admin := h.Admin(ctx, t, 0)
		tx, err := admin.Begin(ctx)
		if err != nil {
			return err
		}
		// The premise: writes acknowledged at a steady level when the lock is taken. On a
		// busy machine the load's sessions may take seconds to log in.
		if err := waitSteadyWrites(ctx, c); err != nil {
			return err
		}
		// Writes block from when the server queues the lock, some time between asking
		// for it and the answer: the fault lies in that span.
		asked = time.Now()
		if _, err := tx.Exec(ctx, `LOCK TABLE `+LedgerTable+` IN EXCLUSIVE MODE`); err != nil {
			return err
		}
		locked = time.Now()
		go func() {
			time.Sleep(blocked) // the demotion's length: writes blocked while the primary still answers
			if err := h.Stop(ctx, 0); err != nil {
				failedOver <- err
				return
			}
			admin.Close(context.Background())
			failedOver <- h.Promote(ctx, 1)
		}()
		return nil
	}}
	run, res := observeWithFailover(t, e, Options{Hooks: hooks, Between: 3 * time.Second}, failedOver)
	dc := cycles(t, res)[0]
	t.Logf("fault timed from %s", dc.FaultStart)
	t.Log(run.Verdict)
	tl := dc.Timeline
	iv := time.Duration(tl.IntervalMS) * time.Millisecond
	f := int(dc.FaultAt.Sub(tl.Start) / iv)
	t.Logf("writes per %v before the fault: %v, after: %v", iv, tl.Writes[max(f-10, 0):f], tl.Writes[f:min(f+20, len(tl.Writes))])
	if !dc.Checked || lostOf(dc) != 0 || dc.To != "new" {
		t.Fatalf("cycle %+v", dc)
	}
	// The fault is the lock, to within the precision the cycle states (an interval, more when
	// the steady load itself dipped as low: on a busy machine it does), not the stop a second
	// and a half later.
	if dc.FaultWithinS == nil {
		t.Fatalf("a fault timed from degraded writes without its precision: %+v", dc)
	}
	within := time.Duration(*dc.FaultWithinS * float64(time.Second))
	if d := dc.FaultAt.Sub(asked); d < -within || dc.FaultAt.Sub(locked) > 2*iv {
		t.Fatalf("fault at %v after the lock was asked for, which took %v (%q); want within %v before it and %v after its answer",
			d, locked.Sub(asked), dc.FaultStart, within, 2*iv)
	}
	stopped := slices.IndexFunc(dc.Events, func(ev result.DrillEvent) bool { return ev.Event == result.EventStoppedAnswering })
	if !strings.HasPrefix(dc.FaultStart, "when writes degraded") || stopped < 0 || dc.Events[stopped].At.Sub(dc.FaultAt) < blocked-2*iv {
		t.Fatalf("fault start %q, events %+v", dc.FaultStart, dc.Events)
	}
	if dc.FailoverSeconds == nil || *dc.FailoverSeconds < blocked.Seconds() {
		t.Fatalf("failover %v s: want from the fault, the blocked writes included", dc.FailoverSeconds)
	}
}

// waitSteadyWrites waits until the cycle's writes have a steady level (minSteadyIntervals
// after the warm-up, their median 2 or more per interval) and have not fallen below it.
func waitSteadyWrites(ctx context.Context, c *Cycle) error {
	for {
		c.tally.mu.Lock()
		d := c.tally.tl.degradedFrom(time.Now())
		c.tally.mu.Unlock()
		if d.ok && d.steady >= 2 && d.n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the load's writes reached no steady level: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// observeWithFailover runs observe while the test fails the cluster over by its own means,
// which reports on failedOver, and fails the test when either went wrong.
func observeWithFailover(t *testing.T, e *Endpoints, o Options, failedOver <-chan error) (*result.DrillRun, *result.Result) {
	t.Helper()
	run, res, err := observe(t, e, o)
	if ferr := <-failedOver; ferr != nil {
		t.Fatalf("the test's own failover: %v", ferr)
	}
	if err != nil {
		t.Fatalf("drill: %v (%+v)", err, run)
	}
	return run, res
}
