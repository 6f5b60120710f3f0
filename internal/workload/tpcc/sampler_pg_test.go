package tpcc

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
)

// The lag follower of a login without pg_monitor records no lag (never 0) and
// says why; the superuser's records it. Where the run's database sampler watches the
// primary (it measures the lag by replay_lsn, or names why not), the workload's says nothing:
// "lag not measured" beside a lag measured was a contradiction.
func TestSamplerLagOfAnUnprivilegedLogin(t *testing.T) {
	t.Parallel() // owns its cluster: it changes the standby's settings
	h := clustertest.NewHandmade(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := h.Admin(ctx, t, 0)
	defer admin.Close(context.Background())
	for _, q := range []string{"CREATE SCHEMA tpcc", "CREATE TABLE tpcc.district (d_next_o_id int)", "INSERT INTO tpcc.district VALUES (1)",
		"GRANT USAGE ON SCHEMA tpcc TO app", "GRANT SELECT ON tpcc.district TO app"} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		user    string
		watched bool // the run's database sampler watches the primary (Workload.LagWatched)
	}{{clustertest.HandmadeApp, false}, {clustertest.HandmadeAdmin, false}, {clustertest.HandmadeApp, true}} {
		user := c.user
		st := lagWindow(ctx, t, h.ConnString(0, user), c.watched)
		_, measured := st.Counters[CounterLagBytesMax]
		warned := strings.Contains(strings.Join(st.Warnings, "\n"), "replication lag not measured: the login app lacks pg_read_all_stats")
		switch {
		case c.watched && (measured || warned): // the database sampler measures it by replay_lsn, or says why not
			t.Errorf("app, watched: lag recorded %v, warned %v: %q", measured, warned, st.Warnings)
		case user == clustertest.HandmadeApp && !c.watched && (measured || !warned):
			t.Errorf("app: lag recorded %v, warned %v: %v %q", measured, warned, st.Counters, st.Warnings)
		case user == clustertest.HandmadeAdmin && (!measured || warned):
			t.Errorf("admin: lag recorded %v, warned %v: %v %q", measured, warned, st.Counters, st.Warnings)
		}
	}

	// A standby caught up with no WAL since: pg_stat_replication forgets its lag times
	// (replay_lag NULL, after two standby replies, one per wal_receiver_status_interval);
	// 0 bytes behind, its lag is 0 s measured, not absent.
	var st *result.Step
	h.WhileLagForgotten(ctx, t, func() { st = lagWindow(ctx, t, h.ConnString(0, clustertest.HandmadeAdmin), false) })
	b, bytes := st.Counters[CounterLagBytesMax]
	secs, hasSecs := st.Counters[CounterLagSecondsMax]
	if !bytes || b != 0 || !hasSecs || secs != 0 {
		t.Errorf("idle caught-up standby: max lag %v bytes (recorded %v), %v s (recorded %v): want 0 bytes and 0 s", b, bytes, secs, hasSecs)
	}
}

// lagWindow runs the sampler of a workload on the primary at cs through a window that lasts
// until its lag follower has read pg_stat_replication (a tick of lagInterval; a fixed 2.5 s
// window held two ticks only while the machine ran the follower in time) and returns the
// step it filled.
func lagWindow(ctx context.Context, t *testing.T, cs string, watched bool) *result.Step {
	t.Helper()
	cfg, err := ConnConfig(cs, "--primary")
	if err != nil {
		t.Fatal(err)
	}
	s, err := (&Workload{Primary: cfg, LagWatched: watched}).NewSampler(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.conn.Close(context.Background())
	st := &result.Step{Window: result.Window{Start: time.Now()}}
	if err := s.Start(ctx, st); err != nil {
		t.Fatal(err)
	}
	for {
		s.mu.Lock()
		read := len(s.lag.T) > 0 || s.lagHidden != ""
		s.mu.Unlock()
		if read {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the lag follower never read pg_stat_replication")
		}
		time.Sleep(50 * time.Millisecond)
	}
	st.Window.End = time.Now()
	if err := s.Stop(ctx, st); err != nil {
		t.Fatal(err)
	}
	return st
}

// A window with no client transaction, in which another session standing for agbench's
// samplers runs 300 transactions and counts them as agbench's own (result.CountOwnXacts):
// the server's TPM leaves them out. What may remain are the transactions of this test's
// own polling session and, the other way, the counters session's own lag reads whose
// statistics were not flushed yet: a few, never the 300.
func TestServerTPMLeavesOutTheSamplersOwn(t *testing.T) {
	t.Parallel() // owns its cluster: in a new database of a shared one, 6 or 7 transactions not its own came into its count
	h := clustertest.NewHandmade(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Autovacuum's workers commit transactions of their own in the database (one per table
	// they look at), flushed to its counts as they exit: one that fell inside the window
	// added 3 "others'" on a busy machine. They are the server's, rightly counted; the test
	// is of the samplers' own, so its server runs without them (restarted: a worker already
	// started would finish its round after a reload).
	c := h.Admin(ctx, t, 0)
	_, err := c.Exec(ctx, "ALTER SYSTEM SET autovacuum = off")
	c.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Stop(ctx, 0); err != nil {
		t.Fatal(err)
	}
	h.Start(ctx, t, 0)
	admin := h.Admin(ctx, t, 0)
	defer admin.Close(context.Background())
	// The setup's transactions are flushed to pg_stat_database before the window opens: an
	// active backend flushes at most once a second and holds the rest until it has idled
	// for up to 10 s, which on a busy machine fell inside the window as "others'" (7).
	for _, q := range []string{"CREATE SCHEMA tpcc", "CREATE TABLE tpcc.district (d_next_o_id int)", "INSERT INTO tpcc.district VALUES (1)", "SELECT pg_stat_force_next_flush()"} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := ConnConfig(h.ConnString(0, clustertest.HandmadeAdmin), "--primary")
	if err != nil {
		t.Fatal(err)
	}
	s, err := (&Workload{Primary: cfg}).NewSampler(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st := &result.Step{Window: result.Window{Start: time.Now()}}
	if err := s.Start(ctx, st); err != nil {
		t.Fatal(err)
	}
	other, err := pgx.Connect(ctx, h.ConnString(0, clustertest.HandmadeAdmin))
	if err != nil {
		t.Fatal(err)
	}
	key := result.OwnXactKey(other.PgConn().Conn().RemoteAddr().String(), other.Config().Database)
	if key != s.ownKey() {
		t.Fatalf("own-transaction keys differ: %q and %q", key, s.ownKey())
	}
	var pid int
	if err := other.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	result.CountOwnXacts(key, 1)
	for range 299 {
		if _, err := other.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
		result.CountOwnXacts(key, 1)
	}
	other.Close(context.Background()) // a backend flushes its statistics as it exits
	polls := 0
	for gone := false; !gone; polls++ {
		if err := admin.QueryRow(ctx, "SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $1", pid).Scan(&gone); err != nil {
			t.Fatal(err)
		}
	}
	st.Window.End = time.Now()
	if err := s.Stop(ctx, st); err != nil {
		t.Fatal(err)
	}
	tpm, ok := st.Counters[CounterServerTPM]
	if !ok {
		t.Fatalf("no server TPM: %q", st.Warnings)
	}
	left := tpm * st.Window.Seconds() / 60
	lagReads := st.Window.Seconds()/lagInterval.Seconds() + 1
	if left > float64(polls+3) || left < -lagReads-1 {
		t.Errorf("server transactions left after the samplers' own: %.1f (own %v, test polls %d)", left, st.Counters[CounterSamplerXacts], polls)
	}
	if st.Counters[CounterSamplerXacts] < 300 {
		t.Errorf("own transactions counted %v, want at least 300", st.Counters[CounterSamplerXacts])
	}
}

// A backend that commits within PGSTAT_MIN_INTERVAL of its last flush and then idles, as a
// VU does once the window closes, holds its counts out of pg_stat_database for up to
// PGSTAT_IDLE_INTERVAL (10 s). The window's end reading waits for them: before, a step's
// server TPM left out the last second or so of every VU's transactions (16-22% of a 10 s
// step under load). A run interrupted while the reading waits has no server TPM, rather
// than a short one.
func TestServerTPMWaitsForTheVUsLateStatistics(t *testing.T) {
	t.Parallel() // owns its cluster: another database's sessions would not matter, but its setup's would
	h := clustertest.NewHandmade(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := h.Admin(ctx, t, 0)
	defer admin.Close(context.Background())
	for _, q := range []string{"CREATE SCHEMA tpcc", "CREATE TABLE tpcc.district (d_next_o_id int)", "INSERT INTO tpcc.district VALUES (1)"} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	const held = 50
	st := heldWindow(ctx, t, h, held, 0)
	tpm, ok := st.Counters[CounterServerTPM]
	if !ok {
		t.Fatalf("no server TPM: %q", st.Warnings)
	}
	got := tpm * st.Window.Seconds() / 60
	t.Logf("server transactions %.1f of the VU's %d, window %.1f s", got, held+1, st.Window.Seconds())
	if got < held+1-0.01 || got > held+1+5 {
		t.Errorf("server transactions of the window %.1f, want the VU's %d (own left out %v)", got, held+1, st.Counters[CounterSamplerXacts])
	}
	for _, wrn := range st.Warnings {
		if strings.Contains(wrn, "TPM: client") {
			t.Errorf("the TPM cross-check fired: %s", wrn)
		}
	}

	// Interrupted while it waits for the held counts (or, on a slow machine, before its
	// first reading): absent, with the reason.
	st = heldWindow(ctx, t, h, held, 300*time.Millisecond)
	if tpm, ok := st.Counters[CounterServerTPM]; ok {
		t.Errorf("an interrupted end reading gave server TPM %.1f (the VU's %d transactions: %.1f)", tpm, held+1, float64(held+1)*60/st.Window.Seconds())
	}
	if !slices.ContainsFunc(st.Warnings, func(w string) bool { return strings.Contains(w, "TPM absent") }) {
		t.Errorf("no reason for the absent server TPM: %q", st.Warnings)
	}
}

// heldWindow measures a window in which one VU commits held+1 transactions whose counts its
// backend holds back (the first is flushed as the session idles; the next, sent at once in
// one string, are held: the backend idles, and so decides to flush, only after the last),
// and ends it; interrupt, unless 0, is when the run is interrupted after the end begins.
func heldWindow(ctx context.Context, t *testing.T, h *clustertest.Handmade, held int, interrupt time.Duration) *result.Step {
	t.Helper()
	cfg, err := ConnConfig(h.ConnString(0, clustertest.HandmadeAdmin), "--primary")
	if err != nil {
		t.Fatal(err)
	}
	w := &Workload{Primary: cfg}
	s, err := w.NewSampler(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	vu, err := pgx.Connect(ctx, h.ConnString(0, clustertest.HandmadeAdmin))
	if err != nil {
		t.Fatal(err)
	}
	defer vu.Close(context.Background())
	st := &result.Step{Window: result.Window{Start: time.Now()}}
	if err := s.Start(ctx, st); err != nil {
		t.Fatal(err)
	}
	if _, err := vu.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := vu.Exec(ctx, strings.Repeat("BEGIN; COMMIT; ", held)); err != nil {
		t.Fatal(err)
	}
	w.win.primaryXacts.Add(int64(held) + 1)
	st.Window.End = time.Now()
	stopCtx := ctx
	if interrupt > 0 {
		var cancel context.CancelFunc
		stopCtx, cancel = context.WithTimeout(ctx, interrupt)
		defer cancel()
	}
	if err := s.Stop(stopCtx, st); err != nil && stopCtx.Err() == nil {
		t.Fatal(err)
	}
	return st
}
