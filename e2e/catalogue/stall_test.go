package catalogue

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/workload/pgops"
)

// Catalogue cases of a load that made no progress for a while (stalled) and of operations
// left running when the window closed (in-flight), on a hand-made primary driven as its
// ordinary login (app).
//
// stalled: the primary and every process it started are stopped (SIGSTOP) for 4 s, 4 s after
// the run's worker session is seen on the primary, in a 12 s window (the window opens as the
// workers have connected), then go on: nothing fails and no session is lost, so only the
// seconds without a completed operation say it. 4 s leave at least three whole empty
// one-second ticks wherever the freeze falls among them, so a tick fired late on a busy
// machine cannot shorten the stretch under the verdict's 2 s. The run exits 0 (the load ran
// again).
//
// in-flight: 2 s into a 10 s window of updates, another session locks the table until the
// run ends: the update waits, fails nothing, and is in no histogram when the window closes
// (the run's p99 said milliseconds), as a commit waiting for a stopped synchronous standby is
// (TestStressStandbysPromotedAndLostMidRun's cluster has none). No operation completed from
// then to the end, so the load was not running when the window closed: the run is
// incomplete and exits 1. The verdict judges the waiting update only when it had waited 10
// times the completed updates' p99 (analyze.InFlightP99Factor), and a busy machine gives
// operations of a millisecond a p99 of hundreds (SELECT 1 beside two CPU burners and other
// test suites: 135-305 ms): in a 6 s window the update waited about 4 s, which a p99 of
// 400 ms hides; in 10 s it waits about 8 s, hidden only by 800 ms.
//
// vu-stalled: 4 threads each run `SELECT pg_advisory_xact_lock_shared(pg_backend_pid())`, a
// lock keyed by its own session that no other thread asks for. 4 s after the run's first
// worker session is seen, another session takes that lock of the worker session with the
// lowest pid for 5 s: that one VU waits while the other three go on, so the step's
// throughput never drops to zero (stalled stays quiet) and only the VU's own stretch without
// a completed operation says it. The window is 14 s, so the 5 s wait is inside it even when
// the run's set-up after its workers connect takes seconds; the run exits 0.
//
// The controls run the same with nothing stopped or locked.
func init() {
	own := handmadeOnce("CREATE TABLE counter (n int); INSERT INTO counter VALUES (0); GRANT SELECT, UPDATE ON counter TO app")
	stress := func(t *testing.T, env *catEnv, fault func(ctx context.Context) error, query, window string, at time.Duration) (int, string, string) {
		h := own(t)
		res := env.Results(t)
		var wait func()
		if fault != nil {
			wait = e2etest.AfterLoadStarts(t, h, 0, at, fault)
		}
		code, out := env.Run(t, "stress", "--primary", h.URL(0, clustertest.HandmadeApp), "-q", query,
			"--threads", "1", "--duration", window, "--sample=false", "--results", res)
		if wait != nil {
			wait()
		}
		return code, out, res
	}
	control := func(query, window string) func(t *testing.T, env *catEnv) (string, string) {
		return func(t *testing.T, env *catEnv) (string, string) {
			code, out, res := stress(t, env, nil, query, window, 0)
			if code != 0 {
				t.Errorf("control: exit %d\n%s", code, out)
			}
			return out, res
		}
	}
	addCase(catalogueCase{
		Verdict: "stalled",
		Name:    "stress whose primary is stopped (SIGSTOP) 4 s after its worker connects, in a 12 s window, for 4 s (as an ordinary login, hand-made primary)",
		Invalid: func(t *testing.T, env *catEnv) (string, string) {
			code, out, res := stress(t, env, e2etest.Freeze(own(t), 0, 4*time.Second), "SELECT 1", "12s", 4*time.Second)
			if code != 0 {
				t.Errorf("a run that stalled and went on: exit %d, want 0\n%s", code, out)
			}
			return out, res
		},
		Control: control("SELECT 1", "12s"),
	})
	addCase(catalogueCase{
		Verdict: "vu-stalled",
		Name:    "stress of 4 threads, each taking an advisory lock keyed by its own session, one of which another session holds for 5 s from 4 s after the workers connect, in a 14 s window (as an ordinary login, hand-made primary)",
		Invalid: func(t *testing.T, env *catEnv) (string, string) {
			h := own(t)
			res := env.Results(t)
			ctx := context.Background()
			locker := h.Admin(ctx, t, 0)
			defer locker.Close(ctx)
			var since time.Time
			if err := locker.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&since); err != nil {
				t.Fatal(err)
			}
			var victim int64
			wait := e2etest.AfterLoadStarts(t, h, 0, 4*time.Second, func(ctx context.Context) error {
				return holdWorkerLock(ctx, locker, since, 4, 5*time.Second, &victim)
			})
			code, out := env.Run(t, "stress", "--primary", h.URL(0, clustertest.HandmadeApp), "-q", vuLockQuery,
				"--threads", "4", "--duration", "14s", "--sample=false", "--results", res)
			wait()
			if code != 0 || !strings.Contains(out, "VU ") {
				t.Errorf("a run one of whose VUs waited 5 s: exit %d, want 0 naming the VU\n%s", code, out)
			}
			vuStallFigures(t, res, victim)
			return out, res
		},
		Control: func(t *testing.T, env *catEnv) (string, string) {
			h := own(t)
			res := env.Results(t)
			code, out := env.Run(t, "stress", "--primary", h.URL(0, clustertest.HandmadeApp), "-q", vuLockQuery,
				"--threads", "4", "--duration", "14s", "--sample=false", "--results", res)
			if code != 0 {
				t.Errorf("control: exit %d\n%s", code, out)
			}
			return out, res
		},
	})
	const update = "UPDATE counter SET n = n + 1"
	addCase(catalogueCase{
		Verdict: "in-flight",
		Name:    "stress of updates whose table another session locks 2 s into a 10 s window, to its end (as an ordinary login, hand-made primary)",
		Invalid: func(t *testing.T, env *catEnv) (string, string) {
			h := own(t)
			ctx := context.Background()
			locker := h.Admin(ctx, t, 0)
			defer locker.Close(ctx) // ends the lock's transaction after the run
			lock := func(ctx context.Context) error {
				_, err := locker.Exec(ctx, "BEGIN; LOCK TABLE counter IN ACCESS EXCLUSIVE MODE")
				return err
			}
			code, out, res := stress(t, env, lock, update, "10s", 2*time.Second)
			if code != 1 || !strings.Contains(out, "to its end") {
				t.Errorf("a run whose commits waited to the window's end: exit %d, want 1 naming it\n%s", code, out)
			}
			if st := e2etest.ReadOneResult(t, res).Steps[0]; st.InFlight != 1 || st.InFlightOldestSeconds < 2 {
				t.Errorf("in flight %d, the oldest for %.1f s: want the waiting commit", st.InFlight, st.InFlightOldestSeconds)
			}
			return out, res
		},
		Control: control(update, "10s"),
	})
}

// vuLockQuery takes, for the statement's transaction, a shared advisory lock keyed by the
// session's own pid: no two sessions of the run ask for the same one.
const vuLockQuery = "SELECT pg_advisory_xact_lock_shared(pg_backend_pid())"

// holdWorkerLock waits until n worker sessions born after since are on locker's server, then
// holds the advisory lock of the one with the lowest pid (vuLockQuery's key) for d and lets
// it go; victim is that pid.
func holdWorkerLock(ctx context.Context, locker *pgx.Conn, since time.Time, n int, d time.Duration, victim *int64) error {
	deadline := time.Now().Add(time.Minute)
	for {
		var got int
		err := locker.QueryRow(ctx, `SELECT count(*), coalesce(min(pid), 0) FROM pg_stat_activity WHERE application_name = $1 AND backend_start > $2`,
			pgops.WorkerAppName, since).Scan(&got, victim)
		if err != nil {
			return err
		}
		if got >= n {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d worker sessions within 1m", got, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := locker.Exec(ctx, `SELECT pg_advisory_lock($1::bigint)`, *victim); err != nil {
		return err
	}
	time.Sleep(d)
	_, err := locker.Exec(ctx, `SELECT pg_advisory_unlock($1::bigint)`, *victim)
	return err
}

// vuStallFigures checks what the run recorded of its one VU that waited: exactly one VU
// with a stretch of 3 s or more (of the 5 s it waited; the window's edges may cut it), on a
// named node, and the analysis' vu-stalled verdict naming it; the step-wide stall quiet.
func vuStallFigures(t *testing.T, res string, victim int64) {
	t.Helper()
	r := e2etest.ReadOneResult(t, res)
	st := r.Steps[0]
	vus := map[int]bool{}
	for _, q := range st.VUQuiet {
		if q.To-q.From >= 3 {
			vus[q.VU] = true
			if q.Node == "" {
				t.Errorf("stretch %+v: no node named", q)
			}
		}
	}
	if len(vus) != 1 {
		t.Errorf("VUs with a stretch of 3 s or more: %v, want the one that waited (pid %d); all stretches %+v", vus, victim, st.VUQuiet)
	}
	if sec, _, _ := analyze.Stall(st); sec > 0 {
		t.Errorf("the step stalled for %.1f s: the other VUs were meant to go on (throughput %v)", sec, st.Throughput["*"].V)
	}
}
