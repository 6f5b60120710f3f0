package catalogue

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// Catalogue case of a load that lost its sessions (sessions-lost).
//
// A hand-made primary of its own, driven as its ordinary login (app) through --primary. The
// invalid run's query trips one second after the run's first call: it takes the login's
// right to log in away and ends every session of it, so the workers lose their sessions and
// cannot make them again for the rest of the window (28000 on every attempt). The trip is
// timed from the first operation inside the server, not from outside by a sleep, so a slow
// start on a busy machine cannot move it out of the window. The run exits 1: part of its load
// was not running at its end. The control gives the login back and runs the same query,
// whose trip is disarmed.
func init() {
	own := handmadeOnce(tripSQL)
	run := func(t *testing.T, env *catEnv, armed bool) (int, string, string) {
		h := own(t)
		ctx := context.Background()
		c := h.Admin(ctx, t, 0)
		defer c.Close(ctx)
		for _, q := range []string{"ALTER ROLE app LOGIN", "TRUNCATE trip_first", fmt.Sprintf("UPDATE trip_armed SET on_ = %t", armed)} {
			if _, err := c.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		res := env.Results(t)
		code, out := env.Run(t, "stress", "--primary", h.URL(0, clustertest.HandmadeApp), "-q", "SELECT trip()",
			"--threads", "2", "--duration", "5s", "--results", res)
		return code, out, res
	}
	addCase(catalogueCase{
		Verdict: "sessions-lost",
		Name:    "stress whose login is refused and its sessions ended 1 s into a 5 s window (as an ordinary login, hand-made primary)",
		Invalid: func(t *testing.T, env *catEnv) (string, string) {
			code, out, res := run(t, env, true)
			if code != 1 || !strings.Contains(out, "sessions lost and not made again") {
				t.Errorf("a run whose sessions stayed lost: exit %d, want 1 and the reason:\n%s", code, out)
			}
			return out, res
		},
		Control: func(t *testing.T, env *catEnv) (string, string) {
			code, out, res := run(t, env, false)
			if code != 0 {
				t.Errorf("control: exit %d\n%s", code, out)
			}
			return out, res
		},
	})
}

// handmadeOnce returns what makes, on its first call in a test, a hand-made primary of that
// test's own (made as its superuser runs setup) and returns it on every later call in that
// test: each case that uses it, run beside the others, has its own.
func handmadeOnce(setup string) func(t *testing.T) *clustertest.Handmade {
	var mu sync.Mutex
	made := map[*testing.T]*clustertest.Handmade{}
	return func(t *testing.T) *clustertest.Handmade {
		mu.Lock()
		h := made[t]
		mu.Unlock()
		if h == nil {
			h = clustertest.NewHandmade(t, 0)
			ctx := context.Background()
			c := h.Admin(ctx, t, 0)
			defer c.Close(ctx)
			if _, err := c.Exec(ctx, setup); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			made[t] = h
			mu.Unlock()
			t.Cleanup(func() {
				mu.Lock()
				delete(made, t)
				mu.Unlock()
			})
		}
		return h
	}
}

// tripSQL makes trip(): the first call notes its time; a call one second after it, while
// armed, makes app unable to log in and ends the other sessions of app; a call in a session
// of app once it may no longer log in ends its own session (the call that took the right
// away commits first, so its own session ends at its next call).
const tripSQL = `
CREATE TABLE trip_first (at timestamptz);
CREATE TABLE trip_armed (on_ boolean);
INSERT INTO trip_armed VALUES (false);
CREATE FUNCTION trip() RETURNS int LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE first timestamptz;
BEGIN
	LOCK TABLE trip_first IN EXCLUSIVE MODE;
	INSERT INTO trip_first SELECT clock_timestamp() WHERE NOT EXISTS (SELECT 1 FROM trip_first);
	SELECT at INTO first FROM trip_first;
	IF NOT (SELECT rolcanlogin FROM pg_roles WHERE rolname = 'app') THEN
		PERFORM pg_terminate_backend(pg_backend_pid());
	ELSIF (SELECT on_ FROM trip_armed) AND clock_timestamp() > first + interval '1 second' THEN
		ALTER ROLE app NOLOGIN;
		PERFORM pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'app' AND pid <> pg_backend_pid();
	END IF;
	RETURN 1;
END $$;
GRANT EXECUTE ON FUNCTION trip() TO app;
`
