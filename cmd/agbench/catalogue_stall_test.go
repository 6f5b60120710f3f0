package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster/clustertest"
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
// in-flight: 2 s into a 6 s window of updates, another session locks the table until the run
// ends: the update waits, fails nothing, and is in no histogram when the window closes (the
// run's p99 said milliseconds), as a commit waiting for a stopped synchronous standby is
// (TestStressStandbysPromotedAndLostMidRun's cluster has none). No operation completed from
// then to the end, so the load was not running when the window closed: the run is
// incomplete and exits 1.
//
// The controls run the same with nothing stopped.
func init() {
	own := handmadeOnce("CREATE TABLE counter (n int); INSERT INTO counter VALUES (0); GRANT SELECT, UPDATE ON counter TO app")
	stress := func(t *testing.T, env *catEnv, fault func(ctx context.Context) error, query, window string, at time.Duration) (int, string, string) {
		h := own(t)
		res := env.Results(t)
		var wait func()
		if fault != nil {
			wait = afterLoadStarts(t, h, 0, at, fault)
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
			code, out, res := stress(t, env, freeze(own(t), 0, 4*time.Second), "SELECT 1", "12s", 4*time.Second)
			if code != 0 {
				t.Errorf("a run that stalled and went on: exit %d, want 0\n%s", code, out)
			}
			return out, res
		},
		Control: control("SELECT 1", "12s"),
	})
	const update = "UPDATE counter SET n = n + 1"
	addCase(catalogueCase{
		Verdict: "in-flight",
		Name:    "stress of updates whose table another session locks 2 s into a 6 s window, to its end (as an ordinary login, hand-made primary)",
		Invalid: func(t *testing.T, env *catEnv) (string, string) {
			h := own(t)
			ctx := context.Background()
			locker := h.Admin(ctx, t, 0)
			defer locker.Close(ctx) // ends the lock's transaction after the run
			lock := func(ctx context.Context) error {
				_, err := locker.Exec(ctx, "BEGIN; LOCK TABLE counter IN ACCESS EXCLUSIVE MODE")
				return err
			}
			code, out, res := stress(t, env, lock, update, "6s", 2*time.Second)
			if code != 1 || !strings.Contains(out, "to its end") {
				t.Errorf("a run whose commits waited to the window's end: exit %d, want 1 naming it\n%s", code, out)
			}
			if st := readOneResult(t, res).Steps[0]; st.InFlight != 1 || st.InFlightOldestSeconds < 2 {
				t.Errorf("in flight %d, the oldest for %.1f s: want the waiting commit", st.InFlight, st.InFlightOldestSeconds)
			}
			return out, res
		},
		Control: control(update, "6s"),
	})
}
